"""Checks provtrace's training exports with the readers trainers use, outside Deno.

    check_training.py openai FILE          OpenAI's chat fine-tuning format, written from its published rules
    check_training.py hf FILE              transformers' apply_chat_template, with a small tokenizer made here
    check_training.py sharegpt FILE        datasets' JSON loader, and ShareGPT's turns
    check_training.py atif FILE SCHEMA     the ATIF v1.7 JSON schema, and the rules its models add

Prints one line per file checked and exits 0, or prints the first problem of each line and exits 1. Nothing is
downloaded: HF_HUB_OFFLINE and HF_DATASETS_OFFLINE are set before transformers and datasets are imported.
"""

import json
import os
import sys
from datetime import datetime

os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["HF_DATASETS_OFFLINE"] = "1"
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")


def lines_of(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


# OpenAI's chat fine-tuning format: https://platform.openai.com/docs/guides/supervised-fine-tuning (the data
# format, with tools and weights), as its own format checker in the cookbook reads it.
OPENAI_LINE_KEYS = {"messages", "tools", "parallel_tool_calls"}
OPENAI_MESSAGE_KEYS = {
    "system": {"role", "content", "name"},
    "developer": {"role", "content", "name"},
    "user": {"role", "content", "name"},
    "assistant": {"role", "content", "name", "tool_calls", "weight", "refusal"},
    "tool": {"role", "content", "tool_call_id"},
}


def openai_problem(line):
    if not isinstance(line, dict):
        return "the line is not an object"
    extra = set(line) - OPENAI_LINE_KEYS
    if extra:
        return f"unknown keys {sorted(extra)}"
    messages = line.get("messages")
    if not isinstance(messages, list) or not messages:
        return "no messages"
    tools = line.get("tools")
    if tools is not None:
        if not isinstance(tools, list):
            return "tools is not a list"
        for t in tools:
            if t.get("type") != "function" or not isinstance(t.get("function", {}).get("name"), str):
                return f"a tool is not a function with a name: {t}"
    if "parallel_tool_calls" in line and not isinstance(line["parallel_tool_calls"], bool):
        return "parallel_tool_calls is not a boolean"
    asked = set()
    trained = 0
    for i, m in enumerate(messages):
        role = m.get("role")
        if role not in OPENAI_MESSAGE_KEYS:
            return f"message {i}: role {role!r}"
        extra = set(m) - OPENAI_MESSAGE_KEYS[role]
        if extra:
            return f"message {i}: unknown keys {sorted(extra)}"
        content = m.get("content")
        if role == "assistant":
            if content is None and not m.get("tool_calls"):
                return f"message {i}: an assistant message with neither content nor tool_calls"
            if "weight" in m and m["weight"] not in (0, 1):
                return f"message {i}: weight {m['weight']!r} is not 0 or 1"
            trained += m.get("weight", 1)
            for c in m.get("tool_calls", []):
                if not isinstance(c.get("id"), str) or c.get("type") != "function":
                    return f"message {i}: a tool call without an id or type function"
                fn = c.get("function", {})
                if not isinstance(fn.get("name"), str) or not isinstance(fn.get("arguments"), str):
                    return f"message {i}: a tool call's function has no name or no arguments text"
                json.loads(fn["arguments"])
                asked.add(c["id"])
        elif not isinstance(content, str):
            return f"message {i}: content is not text"
        if role == "tool" and m.get("tool_call_id") not in asked:
            return f"message {i}: tool_call_id {m.get('tool_call_id')!r} answers no earlier call"
    if trained == 0:
        return "no assistant message is trained on (every weight is 0)"
    return None


def check_openai(path):
    return [openai_problem(line) for line in lines_of(path)]


CHAT_TEMPLATE = (
    "{%- if tools %}<|im_start|>system\n"
    "{%- for m in messages if m.role == 'system' %}{{ m.content }}\n{% endfor %}"
    "# Tools\n{% for t in tools %}{{ t | tojson }}\n{% endfor %}<|im_end|>\n{%- endif %}"
    "{%- for m in messages %}"
    "{%- if m.role == 'system' and tools %}"
    "{%- elif m.role == 'assistant' %}<|im_start|>assistant\n"
    "{%- if m.reasoning_content %}<think>{{ m.reasoning_content }}</think>{% endif %}{{ m.content }}"
    "{%- for c in m.tool_calls or [] %}<tool_call>{\"name\": {{ c.function.name | tojson }}, "
    "\"arguments\": {{ c.function.arguments | tojson }}}</tool_call>{% endfor %}<|im_end|>\n"
    "{%- elif m.role == 'tool' %}<|im_start|>tool\n{{ m.content }}<|im_end|>\n"
    "{%- else %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{%- endif %}"
    "{%- endfor %}"
    "{%- if add_generation_prompt %}<|im_start|>assistant\n{%- endif %}"
)


def small_tokenizer():
    """A word-level tokenizer made with the tokenizers library, with ChatML's special tokens and a template."""
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    vocab = {"[UNK]": 0, "<|im_start|>": 1, "<|im_end|>": 2}
    for word in "user assistant system tool Tools the a of in to".split():
        vocab[word] = len(vocab)
    tok = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    return PreTrainedTokenizerFast(
        tokenizer_object=tok,
        unk_token="[UNK]",
        additional_special_tokens=["<|im_start|>", "<|im_end|>"],
        chat_template=CHAT_TEMPLATE,
    )


def check_hf(path):
    tokenizer = small_tokenizer()
    problems = []
    for line in lines_of(path):
        messages, tools = line.get("messages"), line.get("tools")
        problem = None
        for m in messages:
            for c in m.get("tool_calls") or []:
                if not isinstance(c["function"]["arguments"], dict):
                    problem = "a tool call's arguments are not an object"
        if problem is None:
            text = tokenizer.apply_chat_template(messages, tools=tools or None, tokenize=False)
            ids = tokenizer.apply_chat_template(messages, tools=tools or None, tokenize=True)
            ids = ids["input_ids"] if isinstance(ids, dict) or hasattr(ids, "keys") else ids
            starts = ids.count(1)
            if starts != len(messages) + (1 if tools else 0) - sum(
                1 for m in messages if m["role"] == "system" and tools
            ):
                problem = f"{starts} turns rendered for {len(messages)} messages"
            for m in messages:
                if m.get("content") and m["content"] not in text:
                    problem = f"the rendered text lacks a {m['role']} message's content"
        problems.append(problem)
    return problems


SHAREGPT_FROM = {"human", "gpt", "function_call", "observation"}


def check_sharegpt(path):
    from datasets import load_dataset

    data = load_dataset("json", data_files=path, split="train")
    problems = []
    for row in data:
        turns = row["conversations"]
        problem = None
        if not turns:
            problem = "no turns"
        for i, t in enumerate(turns):
            if t["from"] not in SHAREGPT_FROM:
                problem = f"turn {i}: from {t['from']!r}"
            elif (i % 2 == 0) != (t["from"] in ("human", "observation")):
                problem = f"turn {i}: {t['from']} out of turn (human and observation take the even turns)"
            elif t["from"] == "function_call":
                json.loads(t["value"])
        if row.get("tools"):
            json.loads(row["tools"])
        problems.append(problem)
    if len(problems) != len(lines_of(path)):
        return ["datasets read another number of lines"]
    return problems


def atif_rules(t, where="trajectory"):
    """The rules of Harbor's ATIF models that a JSON schema does not hold."""
    for i, step in enumerate(t["steps"]):
        if step["step_id"] != i + 1:
            return f"{where}: steps[{i}].step_id is {step['step_id']}, not {i + 1}"
        if step["source"] != "agent":
            for field in ("model_name", "reasoning_effort", "reasoning_content", "tool_calls", "metrics"):
                if step.get(field) is not None:
                    return f"{where}: steps[{i}] has {field} on a {step['source']} step"
        if "timestamp" in step:
            datetime.fromisoformat(step["timestamp"].replace("Z", "+00:00"))
        ids = {c["tool_call_id"] for c in step.get("tool_calls") or []}
        for r in (step.get("observation") or {}).get("results", []):
            if r.get("source_call_id") is not None and r["source_call_id"] not in ids:
                return f"{where}: steps[{i}] observes {r['source_call_id']}, not a call of its own"
    seen = set()
    for j, sub in enumerate(t.get("subagent_trajectories") or []):
        if not sub.get("trajectory_id") or sub["trajectory_id"] in seen:
            return f"{where}: subagent_trajectories[{j}] has no trajectory_id of its own"
        seen.add(sub["trajectory_id"])
        problem = atif_rules(sub, f"{where}.subagent_trajectories[{j}]")
        if problem:
            return problem
    return None


def check_atif(path, schema_path):
    from jsonschema import Draft202012Validator

    with open(schema_path, encoding="utf-8") as f:
        validator = Draft202012Validator(json.load(f))
    problems = []
    for t in lines_of(path):
        error = next(iter(validator.iter_errors(t)), None)
        if error is not None:
            problems.append(f"{'/'.join(map(str, error.absolute_path))}: {error.message}")
        elif t.get("schema_version") != "ATIF-v1.7":
            problems.append(f"schema_version {t.get('schema_version')!r}")
        else:
            problems.append(atif_rules(t))
    return problems


def main(argv):
    kind, path = argv[1], argv[2]
    problems = {
        "openai": lambda: check_openai(path),
        "hf": lambda: check_hf(path),
        "sharegpt": lambda: check_sharegpt(path),
        "atif": lambda: check_atif(path, argv[3]),
    }[kind]()
    bad = [(i + 1, p) for i, p in enumerate(problems) if p]
    for n, p in bad:
        print(f"{kind} line {n}: {p}")
    print(f"{kind}: {len(problems)} lines, {len(bad)} with problems")
    return 1 if bad or not problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

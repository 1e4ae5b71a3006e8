# tlogcheck (test-only): a Go program that checks the log's checkpoints, tiles, proofs and cosignatures with Go's
# golang.org/x/mod/sumdb/note and sumdb/tlog and transparency-dev's formats and merkle, fetched through the Go module
# proxy. Sourced by .ci/run, which gives $root. Built into .tools/tlogcheck/, again only when its source changes.
src="$root/tests/provevi/log/tlogcheck"
stamp=$(cat "$src/go.mod" "$src/go.sum" "$src/main.go" | sha256sum | cut -c1-16)
bin="$root/.tools/tlogcheck/tlogcheck-$stamp"
if [ ! -x "$bin" ]; then
  mkdir -p "$root/.tools/tlogcheck"
  (cd "$src" && GOMODCACHE="$root/.tools/gomod" GOFLAGS=-modcacherw go build -o "$bin" .)
fi
export PROVEVI_TEST_TLOGCHECK="$bin"

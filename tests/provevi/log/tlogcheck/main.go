// Command tlogcheck checks a provevi log and proofs with other people's code: Go's golang.org/x/mod/sumdb/note
// and sumdb/tlog, and transparency-dev's formats (checkpoints, cosignature/v1) and merkle (proofs). It is a
// test-only program (tests/provevi/log/go_checker_test.ts runs it); .ci/peers/tlogcheck.sh builds it.
//
// Usage:
//
//	tlogcheck log DIR VKEY                      checkpoint signed; tiles give its root; every entry's proof checks
//	tlogcheck proof FILE LEAF_FILE VKEY [WITNESS_VKEY...]  a tlog-proof binds the leaf to a signed checkpoint
//	tlogcheck consistency OLD_CP NEW_CP VKEY PROOF_FILE    a consistency proof between two checkpoints
//
// It prints "ok" and exits 0, or prints why and exits 1.
package main

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/transparency-dev/formats/log"
	fnote "github.com/transparency-dev/formats/note"
	"github.com/transparency-dev/merkle/proof"
	"github.com/transparency-dev/merkle/rfc6962"
	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"
)

// decimal is an ASCII decimal with no leading zeroes (unless it is 0), as C2SP writes sizes and indexes.
var decimal = regexp.MustCompile(`^(0|[1-9][0-9]*)$`)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Println(err)
		os.Exit(1)
	}
	fmt.Println("ok")
}

func run(args []string) error {
	if len(args) < 1 {
		return fmt.Errorf("usage: tlogcheck log|proof|consistency ...")
	}
	switch args[0] {
	case "log":
		return checkLog(args[1], args[2])
	case "proof":
		return checkProof(args[1], args[2], args[3], args[4:])
	case "consistency":
		return checkConsistency(args[1], args[2], args[3], args[4])
	}
	return fmt.Errorf("unknown command %s", args[0])
}

// openCheckpoint verifies a checkpoint note with the log key (sumdb/note) and parses it (formats/log).
func openCheckpoint(text []byte, vkey string, witnesses []string) (*log.Checkpoint, *note.Note, error) {
	v, err := note.NewVerifier(vkey)
	if err != nil {
		return nil, nil, fmt.Errorf("log vkey: %v", err)
	}
	verifiers := []note.Verifier{v}
	for _, w := range witnesses {
		wv, err := fnote.NewVerifierForCosignatureV1(w)
		if err != nil {
			return nil, nil, fmt.Errorf("witness vkey: %v", err)
		}
		verifiers = append(verifiers, wv)
	}
	n, err := note.Open(text, note.VerifierList(verifiers...))
	if err != nil {
		return nil, nil, fmt.Errorf("note.Open: %v", err)
	}
	// c2sp.org/signed-note: a signature whose name and key ID are a known key's (the log's or a witness's) is
	// verified, and one that fails rejects the note. sumdb/note skips a second line of a key it has verified
	// once, so every line is checked.
	if sep := bytes.LastIndex(text, []byte("\n\n")); sep >= 0 {
		for _, line := range strings.Split(strings.TrimSuffix(string(text[sep+2:]), "\n"), "\n") {
			name, b64, _ := strings.Cut(strings.TrimPrefix(line, "\u2014 "), " ")
			sig, err := base64.StdEncoding.DecodeString(b64)
			if err != nil || len(sig) < 4 {
				continue
			}
			hash := uint32(sig[0])<<24 | uint32(sig[1])<<16 | uint32(sig[2])<<8 | uint32(sig[3])
			for _, known := range verifiers {
				if known.Name() == name && known.KeyHash() == hash && !known.Verify(text[:sep+1], sig[4:]) {
					return nil, nil, fmt.Errorf("a signature of the known key %s does not verify", name)
				}
			}
		}
	}
	cp, _, _, err := log.ParseCheckpoint(text, v.Name(), v)
	if err != nil {
		return nil, nil, fmt.Errorf("log.ParseCheckpoint: %v", err)
	}
	// c2sp.org/tlog-checkpoint: the tree size has no leading zeroes, which formats/log does not check.
	if size := strings.SplitN(n.Text, "\n", 3)[1]; !decimal.MatchString(size) {
		return nil, nil, fmt.Errorf("the tree size %q is not a decimal without leading zeroes", size)
	}
	names := map[string]bool{}
	for _, s := range n.Sigs {
		names[s.Name] = true
	}
	for _, w := range witnesses {
		if !names[strings.SplitN(w, "+", 2)[0]] {
			return nil, nil, fmt.Errorf("no verified cosignature of %s", w)
		}
	}
	return cp, n, nil
}

// tileReader reads C2SP tiles (tile/<L>/<N>[.p/<W>]) from a folder, or the narrowest wider one.
type tileReader struct{ dir string }

func (r tileReader) Height() int { return 8 }

func (r tileReader) ReadTiles(tiles []tlog.Tile) ([][]byte, error) {
	out := make([][]byte, len(tiles))
	for i, t := range tiles {
		p := strings.TrimPrefix(t.Path(), "tile/8/")
		full := strings.SplitN(p, ".p/", 2)[0]
		data, err := os.ReadFile(filepath.Join(r.dir, "tile", p))
		if err != nil {
			data, err = os.ReadFile(filepath.Join(r.dir, "tile", full))
		}
		if err != nil {
			entries, _ := os.ReadDir(filepath.Join(r.dir, "tile", full+".p"))
			best := 0
			for _, e := range entries {
				w, _ := strconv.Atoi(e.Name())
				if w >= int(t.W) && (best == 0 || w < best) {
					best = w
				}
			}
			if best == 0 {
				return nil, fmt.Errorf("no tile %s", p)
			}
			data, err = os.ReadFile(filepath.Join(r.dir, "tile", full+".p", strconv.Itoa(best)))
			if err != nil {
				return nil, err
			}
		}
		if len(data) < int(t.W)*32 {
			return nil, fmt.Errorf("tile %s is short", p)
		}
		out[i] = data[:int(t.W)*32]
	}
	return out, nil
}

func (r tileReader) SaveTiles([]tlog.Tile, [][]byte) {}

func readEntries(dir string, size int64) ([][]byte, error) {
	var out [][]byte
	for n := int64(0); n*256 < size; n++ {
		w := size - n*256
		if w > 256 {
			w = 256
		}
		t := tlog.Tile{H: 8, L: -1, N: n, W: int(w)}
		p := strings.TrimPrefix(t.Path(), "tile/8/data/")
		full := strings.SplitN(p, ".p/", 2)[0]
		data, err := os.ReadFile(filepath.Join(dir, "tile", "entries", p))
		if err != nil {
			data, err = os.ReadFile(filepath.Join(dir, "tile", "entries", full))
		}
		if err != nil {
			return nil, fmt.Errorf("entry bundle %s: %v", p, err)
		}
		for i := 0; i < int(w); i++ {
			if len(data) < 2 {
				return nil, fmt.Errorf("entry bundle %s is short", p)
			}
			l := int(data[0])<<8 | int(data[1])
			out = append(out, data[2:2+l])
			data = data[2+l:]
		}
	}
	return out, nil
}

func checkLog(dir, vkey string) error {
	text, err := os.ReadFile(filepath.Join(dir, "checkpoint"))
	if err != nil {
		return err
	}
	cp, _, err := openCheckpoint(text, vkey, nil)
	if err != nil {
		return err
	}
	size := int64(cp.Size)
	reader := tlog.TileHashReader(tlog.Tree{N: size, Hash: tlog.Hash(cp.Hash)}, tileReader{dir})
	root, err := tlog.TreeHash(size, reader)
	if err != nil {
		return fmt.Errorf("tlog.TreeHash over the tiles: %v", err)
	}
	if !bytes.Equal(root[:], cp.Hash) {
		return fmt.Errorf("the tiles give another root")
	}
	entries, err := readEntries(dir, size)
	if err != nil {
		return err
	}
	for i, e := range entries {
		p, err := tlog.ProveRecord(size, int64(i), reader)
		if err != nil {
			return fmt.Errorf("tlog.ProveRecord %d: %v", i, err)
		}
		if err := tlog.CheckRecord(p, size, root, int64(i), tlog.RecordHash(e)); err != nil {
			return fmt.Errorf("tlog.CheckRecord %d: %v", i, err)
		}
		hashes := make([][]byte, len(p))
		for j := range p {
			hashes[j] = p[j][:]
		}
		if err := proof.VerifyInclusion(rfc6962.DefaultHasher, uint64(i), uint64(size), rfc6962.DefaultHasher.HashLeaf(e), hashes, cp.Hash); err != nil {
			return fmt.Errorf("merkle/proof.VerifyInclusion %d: %v", i, err)
		}
	}
	return nil
}

func checkProof(file, leafFile, vkey string, witnesses []string) error {
	text, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	leaf, err := os.ReadFile(leafFile)
	if err != nil {
		return err
	}
	head, cpText, ok := bytes.Cut(text, []byte("\n\n"))
	if !ok {
		return fmt.Errorf("no empty line")
	}
	// c2sp.org/tlog-proof@v1: the header, an optional "extra <base64>" line, "index <decimal without leading
	// zeroes>", then the proof's hashes.
	lines := strings.Split(string(head), "\n")
	if lines[0] != "c2sp.org/tlog-proof@v1" || len(lines) < 2 {
		return fmt.Errorf("not a tlog-proof")
	}
	lines = lines[1:]
	if extra, ok := strings.CutPrefix(lines[0], "extra "); ok {
		if _, err := base64.StdEncoding.DecodeString(extra); err != nil || len(lines) < 2 {
			return fmt.Errorf("bad extra line %q", lines[0])
		}
		lines = lines[1:]
	}
	indexText, ok := strings.CutPrefix(lines[0], "index ")
	if !ok || !decimal.MatchString(indexText) {
		return fmt.Errorf("bad index line %q", lines[0])
	}
	index, err := strconv.ParseInt(indexText, 10, 64)
	if err != nil {
		return fmt.Errorf("bad index line %q: %v", lines[0], err)
	}
	var hashes [][]byte
	var tp tlog.RecordProof
	for _, l := range lines[1:] {
		h, err := base64.StdEncoding.DecodeString(l)
		if err != nil || len(h) != 32 {
			return fmt.Errorf("bad hash line %q", l)
		}
		hashes = append(hashes, h)
		tp = append(tp, tlog.Hash(h))
	}
	cp, _, err := openCheckpoint(cpText, vkey, witnesses)
	if err != nil {
		return err
	}
	if err := proof.VerifyInclusion(rfc6962.DefaultHasher, uint64(index), cp.Size, rfc6962.DefaultHasher.HashLeaf(leaf), hashes, cp.Hash); err != nil {
		return fmt.Errorf("merkle/proof.VerifyInclusion: %v", err)
	}
	if err := tlog.CheckRecord(tp, int64(cp.Size), tlog.Hash(cp.Hash), index, tlog.RecordHash(leaf)); err != nil {
		return fmt.Errorf("tlog.CheckRecord: %v", err)
	}
	return nil
}

func checkConsistency(oldFile, newFile, vkey, proofFile string) error {
	oldText, err := os.ReadFile(oldFile)
	if err != nil {
		return err
	}
	newText, err := os.ReadFile(newFile)
	if err != nil {
		return err
	}
	oldCp, _, err := openCheckpoint(oldText, vkey, nil)
	if err != nil {
		return err
	}
	newCp, _, err := openCheckpoint(newText, vkey, nil)
	if err != nil {
		return err
	}
	raw, err := os.ReadFile(proofFile)
	if err != nil {
		return err
	}
	var hashes [][]byte
	var tp tlog.TreeProof
	for _, l := range strings.Fields(string(raw)) {
		h, err := base64.StdEncoding.DecodeString(l)
		if err != nil || len(h) != 32 {
			return fmt.Errorf("bad hash line %q", l)
		}
		hashes = append(hashes, h)
		tp = append(tp, tlog.Hash(h))
	}
	if err := proof.VerifyConsistency(rfc6962.DefaultHasher, oldCp.Size, newCp.Size, hashes, oldCp.Hash, newCp.Hash); err != nil {
		return fmt.Errorf("merkle/proof.VerifyConsistency: %v", err)
	}
	if oldCp.Size > 0 && oldCp.Size < newCp.Size {
		if err := tlog.CheckTree(tp, int64(newCp.Size), tlog.Hash(newCp.Hash), int64(oldCp.Size), tlog.Hash(oldCp.Hash)); err != nil {
			return fmt.Errorf("tlog.CheckTree: %v", err)
		}
	}
	return nil
}

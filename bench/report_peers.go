package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// runPeers runs the peer libraries' benchmarks, which live in bench/peers, a module
// of its own so that kvsimd's go.mod never lists them: `go run .` there, in a
// subprocess, prints the peer figures as JSON (the Figure fields), which join this
// run's figures. The first run downloads the peer modules.
func runPeers(o options) ([]Figure, error) {
	dir, err := peersDir()
	if err != nil {
		return nil, err
	}
	args := []string{"run", ".", "-reps", strconv.Itoa(o.reps), "-benchtime", o.benchtime.String(), "-only", o.only}
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go %s in %s: %w", strings.Join(args, " "), dir, err)
	}
	var figs []Figure
	if err := json.NewDecoder(bytes.NewReader(out)).Decode(&figs); err != nil {
		return nil, fmt.Errorf("reading the peers' output: %w", err)
	}
	for i := range figs {
		figs[i].Peer = true
	}
	return figs, nil
}

// peersDir finds bench/peers from the kvsimd module the go command sees from the
// working directory, which is where `go run ./bench` was typed.
func peersDir() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	gomod := strings.TrimSpace(string(out))
	if gomod == "" || gomod == os.DevNull {
		return "", fmt.Errorf("run from inside the kvsimd repository: no go.mod here")
	}
	dir := filepath.Join(filepath.Dir(gomod), "bench", "peers")
	if _, err := os.Stat(filepath.Join(dir, "go.mod")); err != nil {
		return "", fmt.Errorf("no peer module at %s (run from the kvsimd repository): %w", dir, err)
	}
	return dir, nil
}

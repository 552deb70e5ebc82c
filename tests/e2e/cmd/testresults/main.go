// Command testresults reads `go test -json` on stdin, writes the tests' output to stderr as
// `go test -v` would, and prints one line per test that has no subtests, "PASS name" or
// "FAIL name" (SKIP too), in the order they finished: ci/e2e.sh's checks, counted from go
// test's own record of results rather than from its text.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
)

// event is the part of a test2json record this reads.
type event struct {
	Action string
	Test   string
	Output string
}

type result struct{ action, test string }

// leafResults reads the records of r, copying their output to echo, and returns the result of
// each test that no other test is a subtest of.
func leafResults(r io.Reader, echo io.Writer) ([]result, error) {
	var finished []result
	parents := map[string]bool{}
	scanner := bufio.NewScanner(r)
	scanner.Buffer(make([]byte, 1<<20), 1<<24)
	for scanner.Scan() {
		var e event
		if err := json.Unmarshal(scanner.Bytes(), &e); err != nil {
			// go test prints build failures as text, not records: pass them on.
			fmt.Fprintln(echo, scanner.Text())
			continue
		}
		if e.Action == "output" {
			io.WriteString(echo, e.Output)
		}
		if e.Test == "" {
			continue
		}
		switch e.Action {
		case "run":
			if i := strings.LastIndex(e.Test, "/"); i > 0 {
				parents[e.Test[:i]] = true
			}
		case "pass", "fail", "skip":
			finished = append(finished, result{strings.ToUpper(e.Action), e.Test})
		}
	}
	var leaves []result
	for _, f := range finished {
		if !parents[f.test] {
			leaves = append(leaves, f)
		}
	}
	return leaves, scanner.Err()
}

func main() {
	leaves, err := leafResults(os.Stdin, os.Stderr)
	for _, l := range leaves {
		fmt.Println(l.action, l.test)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "testresults:", err)
		os.Exit(1)
	}
}

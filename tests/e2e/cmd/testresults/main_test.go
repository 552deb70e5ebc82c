package main

import (
	"reflect"
	"strings"
	"testing"
)

// A stream as go test -json writes it: a parent with a passing and a failing subtest, a
// subtest of a subtest, and a top-level test without subtests.
const stream = `{"Action":"run","Test":"TestScenarios"}
{"Action":"run","Test":"TestScenarios/cluster"}
{"Action":"run","Test":"TestScenarios/cluster/trains_to_the_last_step"}
{"Action":"output","Test":"TestScenarios/cluster/trains_to_the_last_step","Output":"step 60\n"}
{"Action":"pass","Test":"TestScenarios/cluster/trains_to_the_last_step","Elapsed":1}
{"Action":"run","Test":"TestScenarios/cluster/ps_killed"}
{"Action":"fail","Test":"TestScenarios/cluster/ps_killed","Elapsed":2}
{"Action":"fail","Test":"TestScenarios/cluster","Elapsed":3}
{"Action":"fail","Test":"TestScenarios","Elapsed":3}
{"Action":"run","Test":"TestAlone"}
{"Action":"skip","Test":"TestAlone","Elapsed":0}
{"Action":"fail","Elapsed":3}
# pstrain/tests/e2e/container [build failed]
`

func TestLeafResultsAreTheTestsWithoutSubtests(t *testing.T) {
	var echo strings.Builder
	leaves, err := leafResults(strings.NewReader(stream), &echo)
	if err != nil {
		t.Fatal(err)
	}
	want := []result{
		{"PASS", "TestScenarios/cluster/trains_to_the_last_step"},
		{"FAIL", "TestScenarios/cluster/ps_killed"},
		{"SKIP", "TestAlone"},
	}
	if !reflect.DeepEqual(leaves, want) {
		t.Errorf("leaves %v, want %v", leaves, want)
	}
	if got, want := echo.String(), "step 60\n# pstrain/tests/e2e/container [build failed]\n"; got != want {
		t.Errorf("echoed %q, want %q", got, want)
	}
}

package harness

import (
	"os"
	"slices"
	"strings"
	"testing"
)

// The testdata files are events.jsonl of a real run, trimmed to a few progress and checkpoint
// events: `pstrain local --ps 2 --workers 2 --train-steps 8000 --log-every-steps 200
// --checkpoint-every-seconds 1`, its ps 1 killed (SIGKILL) after its checkpoint at global step
// 2281 and started again by the launcher; it restored that checkpoint, the workers reconnected,
// and the run completed at global step 8000.
func readTestdata(t *testing.T, name string) []Event {
	t.Helper()
	data, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	events, err := ReadEvents(data)
	if err != nil {
		t.Fatal(err)
	}
	return events
}

func TestReadsAWorkersEvents(t *testing.T) {
	f := ReadFacts("mnist-worker-0", readTestdata(t, "worker-0.events.jsonl"))
	if f.Starts != 1 || len(f.Others) != 0 || f.Step != 8000 || f.RunsEnded != 1 || !f.Stopped || f.CompletedAlready ||
		!slices.Equal(f.Steps, []int{1504, 1840, 2363, 2351, 2750}) {
		t.Errorf("%+v", f)
	}
	if len(f.Lost) != 1 || f.Lost[0].Peer != "ps 127.0.0.1:35583" ||
		len(f.Reconnected) != 1 || f.Reconnected[0].Peer != "ps 127.0.0.1:35583" || f.Reconnected[0].Step != 2281 {
		t.Errorf("lost %+v, reconnected %+v", f.Lost, f.Reconnected)
	}
}

func TestReadsAPSEventsAcrossARestart(t *testing.T) {
	events := readTestdata(t, "ps-1.events.jsonl")
	f := ReadFacts("mnist-ps-1", events)
	if f.Starts != 2 || f.BlasThreads != 1 || f.Mode != "sync" || f.Step != 8000 || f.Checkpoint != 8000 || f.RunsEnded != 1 || !f.Stopped ||
		len(f.Restored) != 1 || f.Restored[0].Step != 2281 || f.Restored[0].Completed {
		t.Errorf("%+v", f)
	}
	if !strings.Contains(Lines(f.Restored), `"event":"restored","step":2281`) {
		t.Errorf("the restored event as written: %s", Lines(f.Restored))
	}
	// What the scenario saw when it killed the first process: its last checkpoint.
	restart := 1 + slices.IndexFunc(events[1:], func(e Event) bool { return e.Event == "started" })
	before := ReadFacts("mnist-ps-1", events[:restart])
	if before.Starts != 1 || before.Step != 2281 || before.Checkpoint != 2281 || len(before.Restored) != 0 || before.RunsEnded != 0 {
		t.Errorf("before the restart: %+v", before)
	}
	last := LastProcess(events)
	if f := ReadFacts("mnist-ps-1", last); last[0].Event != "started" || f.Starts != 1 || len(f.Restored) != 1 || !slices.Equal(f.Steps, []int{2400, 8000}) {
		t.Errorf("the last process: %+v", f)
	}
}

func TestFindsEventsOfAnotherProcess(t *testing.T) {
	f := ReadFacts("mnist-ps-0", readTestdata(t, "ps-1.events.jsonl"))
	if f.Starts != 0 || !slices.Equal(f.Others, []string{"ps 1"}) || f.Step != 0 || f.RunsEnded != 0 {
		t.Errorf("ps 1's events read as ps 0's: %+v", f)
	}
}

func TestReadsACompletedRun(t *testing.T) {
	// As docs/operations.md, "Events", describes the event, no run here having found its run
	// completed.
	events, err := ReadEvents([]byte(`{"time":1795260643.153,"role":"worker","index":1,"event":"already_completed","step":3000}` + "\n"))
	if f := ReadFacts("mnist-worker-1", events); err != nil || !f.CompletedAlready || f.Step != 3000 || f.RunsEnded != 0 {
		t.Errorf("%+v %v", f, err)
	}
}

func TestAnUnfinishedLastLineIsLeftForTheNextRead(t *testing.T) {
	data, err := os.ReadFile("testdata/worker-0.events.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	all, _ := ReadEvents(data)
	lines := strings.SplitAfter(string(data), "\n")
	half := strings.Join(lines[:5], "") + lines[5][:40]
	if events, err := ReadEvents([]byte(half)); err != nil || len(events) != 5 || len(all) != 17 {
		t.Errorf("%d events of the first 5 lines and a half (%v); %d of all", len(events), err, len(all))
	}
	if events, err := ReadEvents([]byte(lines[0][:30])); err != nil || events != nil {
		t.Errorf("half a line: %v %v", events, err)
	}
	broken := strings.Join(lines[:2], "") + lines[2][:40] + "\n" + strings.Join(lines[3:], "")
	if _, err := ReadEvents([]byte(broken)); err == nil || !strings.Contains(err.Error(), "line 3 is not an event") {
		t.Errorf("a broken line 3: %v", err)
	}
	if _, err := ReadEvents([]byte(`{"time":1}` + "\n")); err == nil || !strings.Contains(err.Error(), "no role or event") {
		t.Errorf("an object without role and event: %v", err)
	}
}

func TestTellsAPSByItsDNSName(t *testing.T) {
	for peer, want := range map[string]bool{
		"ps mnist-ps-1.mnist-ps:9000":                                  true,
		"ps mnist-ps-1.mnist-ps.pstrain-faults.svc.cluster.local:9000": true,
		"ps mnist-ps-1:9000":                                           true,
		"ps mnist-ps-10.mnist-ps:9000":                                 false,
		"ps mnist-ps-0.mnist-ps:9000":                                  false,
		"worker 1":                                                     false,
	} {
		if got := (Event{Peer: peer}).PeerIsPS("mnist-ps-1"); got != want {
			t.Errorf("%q is mnist-ps-1: %t", peer, got)
		}
	}
}

func TestFindsTheDNSWaitInTheEvents(t *testing.T) {
	// Events as the daemon writes them (daemon/src/observe/event.cpp).
	const data = `{"time":1795260640.000,"role":"worker","index":0,"event":"started","version":"0.1.0","pid":1,"ps_hosts":"mnist-ps-0.mnist-ps:9000,mnist-ps-1.mnist-ps:9000","blas_core":"Haswell","blas_threads":1}
{"time":1795260640.100,"role":"worker","index":0,"event":"waiting","peer":"ps mnist-ps-1.mnist-ps:9000","attempt":1,"reason":"DNS name did not resolve (Host not found)"}
{"time":1795260641.100,"role":"worker","index":0,"event":"waiting","peer":"ps mnist-ps-1.mnist-ps:9000","attempt":10,"reason":"DNS name did not resolve (Host not found)"}
`
	events, err := ReadEvents([]byte(data))
	if line := ReadFacts("mnist-worker-0", events).WaitingForDNS; err != nil || !strings.Contains(line, `"attempt":1,`) {
		t.Errorf("%q %v", line, err)
	}
	if line := ReadFacts("mnist-worker-0", events[:1]).WaitingForDNS; line != "" {
		t.Errorf("%q", line)
	}
}

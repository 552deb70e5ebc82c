// Package harness is the one place where the end-to-end scenarios read what the daemon reports
// about a run: a pod's events.jsonl (docs/operations.md, "Events") and worker 0's result.json.
// The log lines are for people: a scenario reads deploy.log only for what it shows a person.
package harness

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// PodEvents is the pod's events file, as values.yml mounts its log directory.
const PodEvents = "/tmp/mnist-log/events.jsonl"

// Event is a line of events.jsonl, with the fields the scenarios use.
type Event struct {
	Time  float64 `json:"time"` // Unix seconds
	Role  string  `json:"role"` // ps, worker (or local)
	Index int     `json:"index"`
	Event string  `json:"event"` // started, step, checkpoint, restored, lost …
	// Step is the global step of the events that have one (hasStep).
	Step      int `json:"-"`
	hasStep   bool
	Peer      string `json:"peer"`   // "ps HOST:PORT", "worker N"
	Reason    string `json:"reason"` // why: lost, waiting, rejected
	Completed bool   `json:"completed"`
	// BlasThreads are the threads OpenBLAS uses for a call (started).
	BlasThreads int `json:"blas_threads"`
	// Mode is how the run combines gradients, sync or async (started).
	Mode string `json:"mode"`
	// PushEncoding and PullEncoding are how pushes and answers go on the wire (started).
	PushEncoding string `json:"push_encoding"`
	PullEncoding string `json:"pull_encoding"`
	// ToPs and LostState are a re-cut's number of ps and the parameters whose optimizer state
	// started again (recut).
	ToPs      int `json:"to_ps"`
	LostState int `json:"lost_state"`
	// Line is the line as the daemon wrote it, to show.
	Line string `json:"-"`
}

// Process is who wrote the event: "ps 1", "worker 0".
func (e Event) Process() string { return fmt.Sprintf("%s %d", e.Role, e.Index) }

// PeerIsPS says whether the event's peer is the ps of pod (e.g. mnist-ps-1), by its DNS name.
func (e Event) PeerIsPS(pod string) bool {
	rest, found := strings.CutPrefix(e.Peer, "ps "+pod)
	return found && (strings.HasPrefix(rest, ".") || strings.HasPrefix(rest, ":"))
}

// ReadEvents reads an events.jsonl. An unfinished last line (the process is writing it) is left
// for the next read; any other line that is not an event is an error.
func ReadEvents(data []byte) ([]Event, error) {
	text := string(data)
	if i := strings.LastIndexByte(text, '\n'); i < len(text)-1 {
		text = text[:i+1]
	}
	if text == "" {
		return nil, nil // no complete line yet
	}
	var events []Event
	for n, line := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
		var wire struct {
			Event
			Step *int `json:"step"` // present or not
		}
		err := json.Unmarshal([]byte(line), &wire)
		if err == nil && (wire.Role == "" || wire.Event.Event == "") {
			err = errors.New("no role or event")
		}
		if err != nil {
			return events, fmt.Errorf("line %d is not an event (%v): %q", n+1, err, line)
		}
		e := wire.Event
		if wire.Step != nil {
			e.Step, e.hasStep = *wire.Step, true
		}
		e.Line = line
		events = append(events, e)
	}
	return events, nil
}

// LastProcess are the events of the last process that started, from its started event on (all
// when there is none): a process that restarts appends to the same file.
func LastProcess(events []Event) []Event {
	for i := len(events) - 1; i >= 0; i-- {
		if events[i].Event == "started" {
			return events[i:]
		}
	}
	return events
}

// Facts are what a pod's process recorded about its run.
type Facts struct {
	// Starts counts the process's starts (started events of the pod's role and index).
	Starts int
	// BlasThreads are the OpenBLAS threads of its last start, Mode the mode it trained in.
	BlasThreads int
	Mode        string
	// PushEncoding and PullEncoding are the wire encodings of its last start.
	PushEncoding, PullEncoding string
	// Others are the processes ("ps 0", "worker 1") other than the pod's with events in its
	// file: none when the file is the pod's own. The facts below are of the pod's own events.
	Others []string
	// Step is the last global step it reported (a ps: applied; a worker: after its step; either:
	// checkpointed, restored, reconnected), 0 when none.
	Step int
	// Steps are the global steps of its progress events (step), at the cadence of its progress
	// lines.
	Steps []int
	// Checkpoint is the global step of its last checkpoint, 0 when none.
	Checkpoint int
	// Restored are its restored events: a checkpoint restored at start-up.
	Restored []Event
	// Recovered are its recovered events: a ps without a checkpoint that took its shard from a
	// worker's copy.
	Recovered []Event
	// RunsEnded counts the runs it ended (done): a ps at the last global step, a worker after
	// its last step.
	RunsEnded int
	// CompletedAlready says it took the run of the log directory for its own, completed.
	CompletedAlready bool
	// WaitingForDNS is its first event saying that it waits for a ps whose DNS name does not
	// resolve, as written; "" when there is none.
	WaitingForDNS string
	// Lost and Reconnected are its events on losing a ps's connection and reconnecting.
	Lost, Reconnected []Event
	// Recuts are worker 0's re-cuts of the parameters over another number of ps.
	Recuts []Event
	// Stopped says that a signal (SIGTERM) ended it.
	Stopped bool
}

// ReadFacts reads the facts of pod (e.g. mnist-ps-1) from its events.
func ReadFacts(pod string, events []Event) Facts {
	role, index := roleOf(pod)
	own := role + " " + index
	var f Facts
	for _, e := range events {
		if e.Process() != own {
			if !slices.Contains(f.Others, e.Process()) {
				f.Others = append(f.Others, e.Process())
			}
			continue
		}
		if e.hasStep {
			f.Step = e.Step
		}
		switch e.Event {
		case "started":
			f.Starts++
			f.BlasThreads = e.BlasThreads
			f.Mode = e.Mode
			f.PushEncoding, f.PullEncoding = e.PushEncoding, e.PullEncoding
		case "step":
			f.Steps = append(f.Steps, e.Step)
		case "checkpoint":
			f.Checkpoint = e.Step
		case "restored":
			f.Restored = append(f.Restored, e)
		case "recovered":
			f.Recovered = append(f.Recovered, e)
		case "done":
			f.RunsEnded++
		case "already_completed":
			f.CompletedAlready = true
		case "waiting":
			if f.WaitingForDNS == "" && strings.HasPrefix(e.Peer, "ps ") && strings.Contains(e.Reason, "DNS name did not resolve") {
				f.WaitingForDNS = e.Line
			}
		case "lost":
			f.Lost = append(f.Lost, e)
		case "reconnected":
			f.Reconnected = append(f.Reconnected, e)
		case "recut":
			f.Recuts = append(f.Recuts, e)
		case "stopped":
			f.Stopped = true
		}
	}
	return f
}

// Lines are the events as the daemon wrote them, one a line.
func Lines(events []Event) string {
	var lines []string
	for _, e := range events {
		lines = append(lines, e.Line)
	}
	return strings.Join(lines, "\n")
}

// roleOf is the role ("ps" or "worker") and index of a pod of the chart: <release>-<role>-<index>.
func roleOf(pod string) (role, index string) {
	i := strings.LastIndex(pod, "-")
	rest := pod[:max(i, 0)]
	return rest[strings.LastIndex(rest, "-")+1:], pod[i+1:]
}

// Result is worker 0's result.json: the run it trained, to which global step, and how well.
type Result struct {
	RunID           string  `json:"run_id"`
	GlobalStep      int     `json:"global_step"`
	TestAccuracy    float64 `json:"test_accuracy"`
	TrainingElapsed float64 `json:"training_elapsed_s"`
	// BytesPerStep is what worker 0 sent and received a step, counted from its frames.
	BytesPerStep float64 `json:"bytes_per_step"`
}

// ReadResult decodes a result.json.
func ReadResult(data []byte) (Result, error) {
	var r Result
	if err := json.Unmarshal(data, &r); err != nil {
		return r, fmt.Errorf("result.json: %v", err)
	}
	return r, nil
}

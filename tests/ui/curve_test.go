package ui

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
)

// runStatus is what a process's /status says of its run.
type runStatus struct {
	State      string `json:"state"`
	GlobalStep int    `json:"global_step"`
}

// waitStatus polls the /status of a process of the run until it says what is wanted; it fails at
// once if the run's launcher has exited.
func waitStatus(t *testing.T, run localRun, url, what string, wanted func(runStatus) bool, timeout time.Duration) {
	deadline := time.Now().Add(timeout)
	for {
		select {
		case err := <-run.exited:
			t.Fatalf("%s: pstrain local exited (%v) before %s", url, err, what)
		default:
		}
		var status runStatus
		if response, err := http.Get(url + "status"); err == nil {
			_ = json.NewDecoder(response.Body).Decode(&status)
			response.Body.Close()
		}
		if wanted(status) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %s not within %s", url, what, timeout)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// waitCompleted polls worker 0's /status until its run has completed.
func waitCompleted(t *testing.T, run localRun, timeout time.Duration) {
	waitStatus(t, run, run.url, "the run completed", func(s runStatus) bool { return s.State == "completed" }, timeout)
}

// A page opened after a run longer than the 8,192 events a process keeps still draws the whole
// run from its first step, overlays another run given with ?compare=, and its smoothing,
// downloads and time axis work on the curve.
func TestPageOpenedLateShowsTheWholeRunBesideAnother(t *testing.T) {
	artifacts := artifactDir(t)
	const longRun = 12000 // one worker: a step event each global step, well over 8,192
	long := startLocal(t, 1, longRun)
	other := startLocal(t, 1, 2000)
	waitCompleted(t, long, 4*time.Minute)
	waitCompleted(t, other, time.Minute)

	page := browser(t, 2*time.Minute)
	if err := chromedp.Run(page, chromedp.Navigate(long.url+"?compare="+other.url)); err != nil {
		t.Fatal(err)
	}
	t.Run("opened late, beside another", func(t *testing.T) {
		wholeRunBesideAnother(page, t, longRun, other.url, artifacts)
	})
	t.Run("smoothing", func(t *testing.T) { smoothingRedrawsTheLine(page, t) })
	t.Run("downloads", func(t *testing.T) { downloadsHoldTheWholeCurve(page, t, long.url) })
	t.Run("time axis", func(t *testing.T) { timeAxisSwitch(page, t, longRun, long.url, other.url) })
}

// wholeRunBesideAnother: the page opened after the run draws it from its first step, and the
// other run overlaid, both in the hover box.
func wholeRunBesideAnother(ctx context.Context, t *testing.T, longRun int, other, artifacts string) {
	waitUntil(ctx, t, "both runs' curves drawn",
		`+document.getElementById("chart").dataset.runs === 2`, 30*time.Second)
	var curve struct {
		FirstStep, LastStep, ComparedFirst, ComparedLast int
		Legend                                           string
	}
	if err := chromedp.Run(ctx, chromedp.Evaluate(`({
		FirstStep: +document.getElementById("chart").dataset.firstStep,
		LastStep: here.loss[here.loss.length - 1][0],
		ComparedFirst: runs[1].loss[0][0],
		ComparedLast: runs[1].loss[runs[1].loss.length - 1][0],
		Legend: document.getElementById("legend").textContent,
	})`, &curve)); err != nil {
		t.Fatal(err)
	}
	if curve.FirstStep > 10 || curve.LastStep != longRun {
		t.Errorf("the page draws steps %d to %d of a %d-step run; want from the first", curve.FirstStep, curve.LastStep, longRun)
	}
	if curve.ComparedFirst > 10 || curve.ComparedLast != 2000 {
		t.Errorf("the compared run is drawn from step %d to %d; want 1 to 2000", curve.ComparedFirst, curve.ComparedLast)
	}
	if !strings.Contains(curve.Legend, "this run") || !strings.Contains(curve.Legend, other) {
		t.Errorf("the legend %q does not name this run and %s", curve.Legend, other)
	}

	// Hovering over the chart shows each run's values there.
	var box []float64
	if err := chromedp.Run(ctx, chromedp.Evaluate(
		`(() => { const r = document.getElementById("chart").getBoundingClientRect(); return [r.left + r.width / 2, r.top + r.height / 2]; })()`,
		&box)); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Run(ctx, input.DispatchMouseEvent(input.MouseMoved, box[0], box[1])); err != nil {
		t.Fatal(err)
	}
	waitUntil(ctx, t, "each run's loss in the hover box", `(() => {
		const hover = document.getElementById("hover");
		return !hover.hidden && /this run: step [0-9]+, loss [0-9.]+/.test(hover.textContent) &&
			hover.textContent.includes(runs[1].name + ": step");
	})()`, 10*time.Second)
	screenshot(ctx, t, artifacts, "compare.png")
}

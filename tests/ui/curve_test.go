package ui

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
)

// waitCompleted polls the page's process's /status until its run has completed.
func waitCompleted(t *testing.T, url string, timeout time.Duration) {
	deadline := time.Now().Add(timeout)
	for {
		var status struct {
			State string `json:"state"`
		}
		if response, err := http.Get(url + "status"); err == nil {
			_ = json.NewDecoder(response.Body).Decode(&status)
			response.Body.Close()
		}
		if status.State == "completed" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the run of %s did not complete within %s", url, timeout)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// A page opened after a run longer than the 8,192 events a process keeps still draws the whole
// run from its first step, and overlays another run given with ?compare=.
func TestPageOpenedLateShowsTheWholeRunBesideAnother(t *testing.T) {
	artifacts := artifactDir(t)
	const longRun = 12000  // one worker: a step event each global step, well over 8,192
	long := startLocal(t, 1, longRun)
	other := startLocal(t, 1, 2000)
	waitCompleted(t, long, 4*time.Minute)
	waitCompleted(t, other, time.Minute)

	ctx := browser(t, 2*time.Minute)
	if err := chromedp.Run(ctx, chromedp.Navigate(long+"?compare="+other)); err != nil {
		t.Fatal(err)
	}
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

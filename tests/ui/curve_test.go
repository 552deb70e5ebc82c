package ui

import (
	"context"
	"encoding/json"
	"fmt"
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
	t.Run("accuracy axis", func(t *testing.T) { accuracyAxisLabelled(page, t) })
	t.Run("durations", func(t *testing.T) { durationsRoundOnce(page, t) })
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
	hoverCoversNoLabel(ctx, t)
}

// hoverCoversNoLabel moves the mouse to the plot's left side, its middle and its right side and
// checks that the hover box covers none of the chart's labels there, the axes' titles among them.
func hoverCoversNoLabel(ctx context.Context, t *testing.T) {
	recordChart(ctx, t)
	var chart []float64 // left, top, width, height, and the plot's left and right margins
	if err := chromedp.Run(ctx, chromedp.Evaluate(`(() => {
		const chart = document.getElementById("chart");
		chart.scrollIntoView({ block: "center" });
		const r = chart.getBoundingClientRect();
		return [r.left, r.top, r.width, r.height, chartBox.left, chartBox.right];
	})()`, &chart)); err != nil {
		t.Fatal(err)
	}
	for _, at := range []float64{chart[4] + 2, chart[2] / 2, chart[2] - chart[5] - 2} {
		if err := chromedp.Run(ctx, input.DispatchMouseEvent(input.MouseMoved, chart[0]+at, chart[1]+chart[3]/2)); err != nil {
			t.Fatal(err)
		}
		waitUntil(ctx, t, "the hover box at the mouse", fmt.Sprintf(`(() => {
			const hover = document.getElementById("hover");
			return !hover.hidden && Math.abs(hoverAt - %v) < 0.5;
		})()`, at), 10*time.Second)
		var box struct{ Left, Top, Right, Bottom float64 }
		if err := chromedp.Run(ctx, chromedp.Evaluate(`(() => {
			const chart = document.getElementById("chart").getBoundingClientRect();
			const r = document.getElementById("hover").getBoundingClientRect();
			return { Left: r.left - chart.left, Top: r.top - chart.top, Right: r.right - chart.left, Bottom: r.bottom - chart.top };
		})()`, &box)); err != nil {
			t.Fatal(err)
		}
		for _, l := range drawnFrame(ctx, t).Labels {
			if min(box.Right, l.Right)-max(box.Left, l.Left) > 0 && min(box.Bottom, l.Bottom)-max(box.Top, l.Top) > 0 {
				t.Errorf("with the mouse %.0f px into the chart the hover box (%.0f to %.0f across, %.0f to %.0f down) covers the label %q",
					at, box.Left, box.Right, box.Top, box.Bottom, l.Text)
			}
		}
	}
	if err := chromedp.Run(ctx, input.DispatchMouseEvent(input.MouseMoved, 1, 1)); err != nil {
		t.Fatal(err)
	}
}

package ui

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// layoutProblems lists what does not read on the page as laid out now: a page wider than the
// screen, text running off it, two pieces of text over each other (each line of each text node,
// from the DOM's geometry), and chart labels over each other or off the canvas (the boxes the
// page drew its labels in, recorded by recordChart).
func layoutProblems(ctx context.Context, t *testing.T) []string {
	recordChart(ctx, t)
	var problems []string
	if err := chromedp.Run(ctx, chromedp.Evaluate(`(() => {
		const problems = [];
		const width = document.documentElement.clientWidth;
		if (document.documentElement.scrollWidth > width) {
			problems.push("the page is " + document.documentElement.scrollWidth + " px wide on a " + width + " px screen");
		}
		const boxes = [];
		const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
		for (let node; (node = walker.nextNode());) {
			if (!node.textContent.trim() || node.parentElement.closest("select, script")) continue;
			const range = document.createRange();
			range.selectNodeContents(node);
			for (const r of range.getClientRects()) {
				if (r.width > 0 && r.height > 0) boxes.push({ text: node.textContent.trim().slice(0, 40), r });
			}
		}
		const overlap = (a, b) => Math.min(a.right, b.right) - Math.max(a.left, b.left) > 1 &&
			Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top) > 1;
		for (const [i, a] of boxes.entries()) {
			if (a.r.left < -0.5 || a.r.right > width + 0.5) problems.push("'" + a.text + "' runs off the screen");
			for (const b of boxes.slice(i + 1)) {
				if (overlap(a.r, b.r)) problems.push("'" + a.text + "' and '" + b.text + "' overlap");
			}
		}
		const chart = document.getElementById("chart");
		const labels = drawn.Labels.map((l) => ({ text: l.Text, r: { left: l.Left, right: l.Right, top: l.Top, bottom: l.Bottom } }));
		for (const [i, a] of labels.entries()) {
			if (a.r.left < 0 || a.r.top < 0 || a.r.right > chart.clientWidth || a.r.bottom > chart.clientHeight) {
				problems.push("the chart's label '" + a.text + "' runs off the chart");
			}
			for (const b of labels.slice(i + 1)) {
				if (overlap(a.r, b.r)) problems.push("the chart's labels '" + a.text + "' and '" + b.text + "' overlap");
			}
		}
		if (chart.width !== Math.round(chart.clientWidth * devicePixelRatio)) {
			problems.push("the chart is " + chart.width + " pixels wide for " + chart.clientWidth + " CSS px at " + devicePixelRatio + " device pixels each");
		}
		return problems;
	})()`, &problems)); err != nil {
		t.Fatal(err)
	}
	return problems
}

// checkLayout fails the test with each of the page's layout problems.
func checkLayout(ctx context.Context, t *testing.T, where string) {
	for _, problem := range layoutProblems(ctx, t) {
		t.Errorf("%s: %s", where, problem)
	}
}

// phone makes the page a phone's: 390 CSS px wide, three device pixels to one.
func phone(ctx context.Context, t *testing.T) {
	if err := chromedp.Run(ctx, chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(3), chromedp.EmulateMobile)); err != nil {
		t.Fatal(err)
	}
}

func text(ctx context.Context, t *testing.T, id string) string {
	var s string
	if err := chromedp.Run(ctx, chromedp.Evaluate(`document.getElementById(`+strconv.Quote(id)+`).textContent`, &s)); err != nil {
		t.Fatal(err)
	}
	return s
}

// A run without --keep-serving, followed on a phone: its summary from the start, and when the
// processes exit at the end the page says it completed, with the final accuracy, duration, end,
// the model's path and the command that serves it; the page reads on a 390 px screen and on a
// desktop's, with nothing over anything else.
func TestPageEndsOnCompletedOnAPhone(t *testing.T) {
	artifacts := artifactDir(t)
	// The mode set, so that the summary's does not depend on this machine's CPUs (sync: auto).
	run := startRun(t, 2, 20000, "--sync", "false")
	// Worker 0 answers before it has read the data set: the page is open before the first step.
	waitStatus(t, run, run.url, "worker 0 answering", func(s runStatus) bool { return s.State != "" }, 30*time.Second)
	ctx := browser(t, 3*time.Minute)
	phone(ctx, t)
	if err := chromedp.Run(ctx, chromedp.Navigate(run.url)); err != nil {
		t.Fatal(err)
	}

	waitUntil(ctx, t, "the run's summary while it trains", `(() => {
		const $ = (id) => document.getElementById(id).textContent;
		return $("state") === "training" && $("dataSet") === "Fashion-MNIST" && $("layers") === "784-128-10" &&
			$("optimizer") === "adam" && $("learningRate") === "0.001" && $("batchSize") === "100" &&
			$("workers") === "2" && $("mode") === "asynchronous" && /\d+ s/.test($("elapsed")) &&
			+document.getElementById("chart").dataset.points > 20 &&
			document.querySelectorAll("#processes tbody tr").length === 4;
	})()`, time.Minute)
	checkLayout(ctx, t, "390 px, training")
	screenshot(ctx, t, artifacts, "phone-training.png")

	select {
	case err := <-run.exited:
		if err != nil {
			t.Fatalf("pstrain local: %v", err)
		}
	case <-time.After(2 * time.Minute):
		t.Fatal("pstrain local did not end within 2 minutes of the page seeing it train")
	}
	waitUntil(ctx, t, "the page saying the run completed once its processes have exited", `(() => {
		const state = document.getElementById("state");
		return state.textContent === "completed" && state.className === "state completed" &&
			!document.getElementById("exited").hidden;
	})()`, 10*time.Second)

	var result struct {
		TestAccuracy float64 `json:"test_accuracy"`
		GlobalStep   int     `json:"global_step"`
	}
	data, err := os.ReadFile(filepath.Join(run.logDir, "worker-0", "result.json"))
	if err != nil || json.Unmarshal(data, &result) != nil {
		t.Fatalf("worker 0's result.json: %v", err)
	}
	modelPath := filepath.Join(run.logDir, "worker-0", "model.bin")
	want := map[string]string{
		"finalAccuracy": fmt.Sprintf("%.4f at global step %d", result.TestAccuracy, result.GlobalStep),
		"modelPath":     modelPath,
		"serveCommand":  "pstrain serve --model " + modelPath,
		"eta":           "done",
	}
	for id, wanted := range want {
		if got := text(ctx, t, id); got != wanted {
			t.Errorf("#%s says %q; want %q", id, got, wanted)
		}
	}
	for _, id := range []string{"duration", "ended"} {
		if got := text(ctx, t, id); got == "–" || got == "" {
			t.Errorf("#%s says nothing of the run's end", id)
		}
	}
	if !regexp.MustCompile(`^\d+ s, of which training \d+ s$`).MatchString(text(ctx, t, "duration")) {
		t.Errorf("the duration reads %q", text(ctx, t, "duration"))
	}
	if got := text(ctx, t, "modelState"); strings.Contains(got, "no model yet") {
		t.Errorf("the model section still says %q", got)
	}
	if _, err := http.Get(run.url + "status"); err == nil {
		t.Errorf("worker 0 still answers after pstrain local exited")
	}
	checkLayout(ctx, t, "390 px, completed")
	screenshot(ctx, t, artifacts, "phone-completed.png")

	if err := chromedp.Run(ctx, chromedp.EmulateViewport(1000, 1400)); err != nil {
		t.Fatal(err)
	}
	waitUntil(ctx, t, "the chart redrawn at 1000 px", `document.getElementById("chart").clientWidth > 800 &&
		document.getElementById("chart").width === document.getElementById("chart").clientWidth`, 10*time.Second)
	checkLayout(ctx, t, "1000 px, completed")
	screenshot(ctx, t, artifacts, "desktop-completed.png")
}

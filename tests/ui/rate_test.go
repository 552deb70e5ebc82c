package ui

import (
	"fmt"
	"regexp"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// seconds reads a duration as the page writes it: "42 s", "3 min 5 s", "2 h 7 min".
func seconds(t *testing.T, text string) float64 {
	m := regexp.MustCompile(`^(?:(\d+) h )?(?:(\d+) min ?)?(?:(\d+) s)?$`).FindStringSubmatch(text)
	if m == nil || text == "" {
		t.Fatalf("%q is not a duration as the page writes one", text)
	}
	total := 0.0
	for i, unit := range []float64{3600, 60, 1} {
		if m[i+1] != "" {
			n, _ := strconv.Atoi(m[i+1])
			total += float64(n) * unit
		}
	}
	return total
}

// A shown status: what the page showed right after it took in one /status.
type shownStatus struct {
	Time       float64 // seconds, the page's clock
	State      string
	Step       int
	TrainSteps int
	Rate, Eta  string
}

// A second's hiccup must not swing the page's steps/s and ETA (a rate from the last second showed
// "7 steps/s, ETA 271 min" with a minute left). ps 0's page of a one-worker run watches the
// worker stopped (SIGSTOP) three times for 1.5 s, 0.3 s apart; every steps/s and ETA it shows
// from then until three statuses later stays within a band of the run's rate over the page's
// window, as the test counts it from the same statuses (half to one and a half times it): a
// machine that slows down moves both. The rate of the last second, which the page showed before,
// falls to a third of it after a stall and rises to 1.7 times it once running again. The run is
// one that would outlast the test at any speed, stopped when it ends.
func TestPageRatesHoldThroughStalls(t *testing.T) {
	const stalls, stopped, between = 3, 1500 * time.Millisecond, 300 * time.Millisecond
	run := startLocal(t, 1, 100_000_000)
	ps := childOf(t, run.pid, "ps", 0)
	worker := childOf(t, run.pid, "worker", 0)
	psPage := "http://127.0.0.1:" + ps.lastFlag("--http-port") + "/"
	waitStatus(t, run, psPage, "a first global step", func(s runStatus) bool { return s.GlobalStep > 0 }, time.Minute)
	ctx := browser(t, 2*time.Minute)
	if err := chromedp.Run(ctx, chromedp.Navigate(psPage)); err != nil {
		t.Fatal(err)
	}
	// Record what the page shows each time it has taken in a status.
	if err := chromedp.Run(ctx, chromedp.Evaluate(`window.shown = [];
		const showTaken = showStatus;
		showStatus = (s) => {
			showTaken(s);
			shown.push({ Time: performance.now() / 1000, State: s.state, Step: s.global_step,
				TrainSteps: s.train_steps, Rate: $("rate").textContent, Eta: $("eta").textContent });
		};`, nil)); err != nil {
		t.Fatal(err)
	}
	waitUntil(ctx, t, "8 s of training seen by ps 0's page",
		`shown.length > 0 && shown.at(-1).Time - shown[0].Time >= 8`,
		time.Minute)
	var from int
	if err := chromedp.Run(ctx, chromedp.Evaluate(`shown.length`, &from)); err != nil {
		t.Fatal(err)
	}
	// The hiccup: what a stopped process does to the run is the point, so it lasts a set time.
	defer syscall.Kill(worker.pid, syscall.SIGCONT)
	for i := 0; i < stalls; i++ {
		if err := syscall.Kill(worker.pid, syscall.SIGSTOP); err != nil {
			t.Fatal(err)
		}
		time.Sleep(stopped)
		if err := syscall.Kill(worker.pid, syscall.SIGCONT); err != nil {
			t.Fatal(err)
		}
		time.Sleep(between)
	}
	var end int
	if err := chromedp.Run(ctx, chromedp.Evaluate(`shown.length`, &end)); err != nil {
		t.Fatal(err)
	}
	waitUntil(ctx, t, "three statuses on the page after the stalls",
		fmt.Sprintf(`shown.length >= %d`, end+3), time.Minute)

	var shown []shownStatus
	if err := chromedp.Run(ctx, chromedp.Evaluate(`shown`, &shown)); err != nil {
		t.Fatal(err)
	}
	// The run's rate over the page's window up to status i, from the statuses the test recorded.
	const window = 30 // seconds, the page's kRateWindowSeconds
	windowRate := func(i int) float64 {
		j := 0
		for shown[i].Time-shown[j].Time > window {
			j++
		}
		return float64(shown[i].Step-shown[j].Step) / (shown[i].Time - shown[j].Time)
	}
	stalled := 0.0 // the longest time between statuses over which the run was all but still
	for i := from; i < len(shown); i++ {
		s := shown[i]
		inWindow := windowRate(i)
		if s.State != "training" {
			t.Fatalf("ps 0 is %s at global step %d", s.State, s.Step)
		}
		if i > from && float64(s.Step-shown[i-1].Step) < 0.1*windowRate(from)*(s.Time-shown[i-1].Time) {
			stalled = max(stalled, s.Time-shown[i-1].Time)
		}
		rate, err := strconv.ParseFloat(s.Rate, 64)
		eta := seconds(t, s.Eta)
		left := float64(s.TrainSteps - s.Step)
		t.Logf("%.1f s: step %d, %s steps/s (over the window %.0f), ETA %s", s.Time-shown[from].Time, s.Step, s.Rate,
			inWindow, s.Eta)
		if err != nil || rate < 0.5*inWindow || rate > 1.5*inWindow {
			t.Errorf("at global step %d the page shows %q steps/s; the run's rate over its window is %.0f", s.Step, s.Rate,
				inWindow)
		}
		// Within the rates' band; the page writes an ETA this long in minutes, so to the minute.
		if eta < left/(1.5*inWindow)-60 || eta > left/(0.5*inWindow)+60 {
			t.Errorf("at global step %d the page shows an ETA of %s; %.0f steps left at the window's rate is %s",
				s.Step, s.Eta, left, time.Duration(left/inWindow)*time.Second)
		}
	}
	if stalled < 0.9 { // a poll's second
		t.Errorf("the page never saw the run stalled between two statuses: the worker was not stopped")
	}
}

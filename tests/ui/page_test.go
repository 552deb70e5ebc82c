// The page at / in a real browser: Debian's chromium, driven over the DevTools protocol, loads
// worker 0's page of a live `pstrain local` run, watches the step count rise and the curve get
// drawn, draws a digit with the mouse once the model exists and reads the prediction. Run by
// ci/ui-test.sh; TEST_PSTRAIN_BINARY names the binary, TEST_UI_ARTIFACTS where screenshots go.
package ui

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
)

const fashionMnist = "/usr/share/datasets/fashion-mnist"

// localRun is a `pstrain local` run: worker 0's page, the launcher's PID, its log dir, and its
// exit (what cmd.Wait returned) once it has exited.
type localRun struct {
	url    string
	pid    int
	logDir string
	exited <-chan error
}

// startLocal starts `pstrain local --keep-serving` with `workers` workers; the run is stopped
// (SIGTERM to its PID, which stops its children) when the test ends.
func startLocal(t *testing.T, workers, trainSteps int) localRun {
	return startRun(t, workers, trainSteps, "--keep-serving")
}

// startRun starts `pstrain local` with `workers` workers and the flags in `extra`, stopped as
// startLocal's is when the test ends.
func startRun(t *testing.T, workers, trainSteps int, extra ...string) localRun {
	binary := os.Getenv("TEST_PSTRAIN_BINARY")
	if binary == "" {
		t.Fatal("TEST_PSTRAIN_BINARY must name the pstrain binary")
	}
	logDir := t.TempDir()
	cmd := exec.Command(binary, append([]string{"local", "--ps", "2", "--workers", strconv.Itoa(workers),
		"--data-dir", fashionMnist, "--train-steps", strconv.Itoa(trainSteps),
		"--eval-every-steps", "500", "--log-dir", logDir}, extra...)...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1) // its exit, then closed: every later receive returns at once
	go func() {
		exited <- cmd.Wait()
		close(exited)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		<-exited
	})
	page := regexp.MustCompile(`worker 0's page: (http://\S+)`)
	urls := make(chan string, 1)
	go func() {
		scanner := bufio.NewScanner(out)
		for scanner.Scan() {
			if m := page.FindStringSubmatch(scanner.Text()); m != nil {
				urls <- m[1]
			}
		}
	}()
	select {
	case url := <-urls:
		return localRun{url, cmd.Process.Pid, logDir, exited}
	case err := <-exited:
		t.Fatalf("pstrain local exited (%v) before printing worker 0's page URL", err)
	case <-time.After(30 * time.Second):
		t.Fatal("pstrain local did not print worker 0's page URL")
	}
	return localRun{}
}

// child is one of a run's processes, found among the launcher's children by its arguments.
type child struct {
	pid  int
	args []string
}

// lastFlag is the value of the child's last `flag`, the one it uses.
func (c child) lastFlag(flag string) string {
	for i := len(c.args) - 2; i >= 0; i-- {
		if c.args[i] == flag {
			return c.args[i+1]
		}
	}
	return ""
}

// childOf finds the launcher's child with this --role and --index in /proc, waiting for it: a
// child forked but not yet running pstrain has the launcher's command line.
func childOf(t *testing.T, launcher int, role string, index int) child {
	deadline := time.Now().Add(10 * time.Second)
	for {
		if c, ok := findChild(launcher, role, index); ok {
			return c
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %s %d among the children of pstrain local (PID %d) within 10 s", role, index, launcher)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// findChild looks once for the launcher's child with this --role and --index in /proc.
func findChild(launcher int, role string, index int) (child, bool) {
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, stat := range stats {
		text, err := os.ReadFile(stat)
		if err != nil {
			continue // it ended
		}
		// pid (comm) state ppid ...: comm may hold spaces, so read after its closing parenthesis.
		fields := strings.Fields(string(text[bytes.LastIndexByte(text, ')')+1:]))
		if len(fields) < 2 || fields[1] != strconv.Itoa(launcher) {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join(filepath.Dir(stat), "cmdline"))
		if err != nil {
			continue
		}
		c := child{args: strings.Split(strings.TrimSuffix(string(cmdline), "\x00"), "\x00")}
		c.pid, _ = strconv.Atoi(filepath.Base(filepath.Dir(stat)))
		if c.lastFlag("--role") == role && c.lastFlag("--index") == strconv.Itoa(index) {
			return c, true
		}
	}
	return child{}, false
}

// waitUntil evaluates the JavaScript condition every 50 ms until it is true.
func waitUntil(ctx context.Context, t *testing.T, what, condition string, timeout time.Duration) {
	deadline := time.Now().Add(timeout)
	for {
		var ok bool
		if err := chromedp.Run(ctx, chromedp.Evaluate(condition, &ok)); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s", what, timeout)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func screenshot(ctx context.Context, t *testing.T, dir, name string) {
	var png []byte
	if err := chromedp.Run(ctx, chromedp.FullScreenshot(&png, 100)); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", path)
}

// drawStroke scrolls the drawing pad into view, presses the mouse at the first point, moves
// through the others and releases it: the browser turns these into the pointer events the page
// listens to.
func drawStroke(ctx context.Context, t *testing.T, points [][2]float64) {
	var box []float64
	if err := chromedp.Run(ctx, chromedp.Evaluate(`(() => {
		const pad = document.getElementById("draw");
		pad.scrollIntoView({ block: "center" });
		const r = pad.getBoundingClientRect();
		return [r.left, r.top];
	})()`,
		&box)); err != nil {
		t.Fatal(err)
	}
	at := func(kind input.MouseType, p [2]float64, buttons int64) chromedp.Action {
		return input.DispatchMouseEvent(kind, box[0]+p[0], box[1]+p[1]).
			WithButton(input.Left).WithButtons(buttons).WithClickCount(1)
	}
	actions := []chromedp.Action{at(input.MousePressed, points[0], 1)}
	for _, p := range points[1:] {
		actions = append(actions, at(input.MouseMoved, p, 1))
	}
	actions = append(actions, at(input.MouseReleased, points[len(points)-1], 0))
	if err := chromedp.Run(ctx, actions...); err != nil {
		t.Fatal(err)
	}
}

func artifactDir(t *testing.T) string {
	artifacts := os.Getenv("TEST_UI_ARTIFACTS")
	if artifacts == "" {
		artifacts = t.TempDir()
	}
	if err := os.MkdirAll(artifacts, 0o755); err != nil {
		t.Fatal(err)
	}
	return artifacts
}

// browser starts a headless chromium; it is stopped when the test ends.
func browser(t *testing.T, timeout time.Duration) context.Context {
	chromium, err := exec.LookPath("chromium")
	if err != nil {
		t.Fatal("chromium is not installed (ci/install-deps.sh --ui installs it)")
	}
	options := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(chromium),
		chromedp.NoSandbox, chromedp.WindowSize(1000, 1400))
	allocator, cancelAllocator := chromedp.NewExecAllocator(context.Background(), options...)
	ctx, cancelBrowser := chromedp.NewContext(allocator)
	ctx, cancelTimeout := context.WithTimeout(ctx, timeout)
	t.Cleanup(func() { cancelTimeout(); cancelBrowser(); cancelAllocator() })
	return ctx
}

func TestPageFollowsTrainingAndPredictsADrawnDigit(t *testing.T) {
	artifacts := artifactDir(t)
	url := startLocal(t, 2, 15000).url
	ctx := browser(t, 6*time.Minute)

	if err := chromedp.Run(ctx, chromedp.Navigate(url)); err != nil {
		t.Fatal(err)
	}
	// The step count rises as training goes, and the curve gets points and ink.
	waitUntil(ctx, t, "a first global step on the page",
		`+document.getElementById("step").textContent > 0 && document.getElementById("state").textContent === "training"`,
		60*time.Second)
	var first int
	if err := chromedp.Run(ctx, chromedp.Evaluate(`+document.getElementById("step").textContent`, &first)); err != nil {
		t.Fatal(err)
	}
	waitUntil(ctx, t, "the global step rising past "+strconv.Itoa(first),
		fmt.Sprintf(`+document.getElementById("step").textContent > %d`, first), 30*time.Second)
	waitUntil(ctx, t, "the loss curve drawn", `(() => {
		const chart = document.getElementById("chart");
		if (+chart.dataset.points < 3) return false;
		const pixels = chart.getContext("2d").getImageData(0, 0, chart.width, chart.height).data;
		for (let i = 0; i < pixels.length; i += 4) {
			if (pixels[i + 2] > 200 && pixels[i] < 80 && pixels[i + 3] > 0) return true;  // the blue loss line
		}
		return false;
	})()`, 30*time.Second)
	// Every process with its state: both ps (gathered by worker 0) and both workers.
	waitUntil(ctx, t, "ps 0, ps 1, worker 0 and worker 1 training in the processes table", `(() => {
		const rows = [...document.querySelectorAll("#processes tbody tr")];
		const states = Object.fromEntries(rows.map((r) => [r.dataset.process, r.dataset.state]));
		return !document.getElementById("cluster").hidden &&
			["ps 0", "ps 1", "worker 0", "worker 1"].every((p) => states[p] === "training");
	})()`, 30*time.Second)
	// How stale each ps's pushes are: a mean and a p99 bound beside its rate.
	waitUntil(ctx, t, "the staleness of each ps's pushes in the processes table", `(() => {
		const rows = [...document.querySelectorAll("#processes tbody tr")]
			.filter((r) => r.dataset.process.startsWith("ps "));
		return rows.length === 2 && rows.every((r) => /staleness [0-9.]+ \(p99 ≤ [0-9]+\)/.test(r.textContent));
	})()`, 30*time.Second)
	screenshot(ctx, t, artifacts, "training.png")

	// Each worker's own rate, batch loss and when a ps last heard from it.
	waitUntil(ctx, t, "each worker's steps/s, loss and last seen in the processes table", `(() => {
		const rows = [...document.querySelectorAll("#processes tbody tr")]
			.filter((r) => r.dataset.process.startsWith("worker "));
		return rows.length === 2 &&
			rows.every((r) => /[0-9]+ steps\/s, loss [0-9.]+, seen [0-9]+ s ago/.test(r.textContent));
	})()`, 60*time.Second)

	// Once the model exists the drawing pad appears, with the names of Fashion-MNIST's classes.
	waitUntil(ctx, t, "the drawing pad (the model exists)",
		`!document.getElementById("predictor").hidden`, 4*time.Minute)
	var names []string
	if err := chromedp.Run(ctx, chromedp.Evaluate(
		`[...document.querySelectorAll("#probabilities b")].map((b) => b.textContent)`, &names)); err != nil {
		t.Fatal(err)
	}
	fashion := []string{"T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt",
		"Sneaker", "Bag", "Ankle boot"}
	if strings.Join(names, ",") != strings.Join(fashion, ",") {
		t.Errorf("the page names the classes %q; Fashion-MNIST's are %q", names, fashion)
	}
	var modelState string
	if err := chromedp.Run(ctx, chromedp.Text("#modelState", &modelState)); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(modelState, "digit") {
		t.Errorf("the page asks for a digit of a Fashion-MNIST model: %q", modelState)
	}

	// A stroke drawn as a pen would.
	var stroke [][2]float64
	for y := 40.0; y <= 240; y += 10 {
		stroke = append(stroke, [2]float64{140 + (y-140)*0.05, y})
	}
	drawStroke(ctx, t, stroke)
	waitUntil(ctx, t, "a prediction on the page",
		`document.getElementById("prediction").dataset.class !== undefined && document.getElementById("probabilities").children.length === 10`,
		20*time.Second)
	screenshot(ctx, t, artifacts, "prediction.png")

	// What the page shows is what /predict answers for the same drawing.
	var shown string
	var dataURL string
	if err := chromedp.Run(ctx,
		chromedp.Evaluate(`document.getElementById("prediction").dataset.class`, &shown),
		chromedp.Evaluate(`document.getElementById("draw").toDataURL("image/png")`, &dataURL)); err != nil {
		t.Fatal(err)
	}
	drawing, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(dataURL, "data:image/png;base64,"))
	if err != nil {
		t.Fatal(err)
	}
	response, err := http.Post(url+"predict", "image/png", bytes.NewReader(drawing))
	if err != nil {
		t.Fatal(err)
	}
	defer response.Body.Close()
	var answer struct {
		Predictions []int `json:"predictions"`
	}
	if err := json.NewDecoder(response.Body).Decode(&answer); err != nil || len(answer.Predictions) != 1 {
		t.Fatalf("/predict of the drawing: status %d, %v", response.StatusCode, err)
	}
	if strconv.Itoa(answer.Predictions[0]) != shown {
		t.Errorf("the page shows class %s; /predict answers %d for the same drawing", shown, answer.Predictions[0])
	}
	t.Logf("the drawn stroke is class %s", shown)

	uploadsAgreeWithJSON(ctx, t, url)
	screenshot(ctx, t, artifacts, "upload.png")

	// A file the model server refuses clears the prediction shown before and says why.
	notPng := filepath.Join(t.TempDir(), "notes.png")
	if err := os.WriteFile(notPng, []byte("not a picture"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Run(ctx, chromedp.SetUploadFiles("#file", []string{notPng}, chromedp.ByQuery)); err != nil {
		t.Fatal(err)
	}
	waitUntil(ctx, t, "the refused file's error, and no prediction left on the page", `(() => {
		const prediction = document.getElementById("prediction");
		return document.getElementById("predictError").textContent.includes("PNG") &&
			prediction.dataset.class === undefined && prediction.textContent === "–" &&
			document.getElementById("inputSeen").hidden &&
			[...document.querySelectorAll("#probabilities div")].every((row) =>
				parseFloat(row.querySelector(".p").style.width) === 0 && row.lastChild.textContent === "–");
	})()`, 20*time.Second)
	refusalReadsBesideThePadUntilCleared(ctx, t)
}

// refusalReadsBesideThePadUntilCleared refuses a file whose error is long (a JPEG's), then checks
// that the error reads as one (a contrast with the page of at least 7:1, WCAG's AAA for text),
// that the answer's column stays beside the pad, and that Clear takes the error away.
func refusalReadsBesideThePadUntilCleared(ctx context.Context, t *testing.T) {
	jpeg := filepath.Join(t.TempDir(), "photo.jpg")
	if err := os.WriteFile(jpeg, []byte("\xff\xd8\xff\xe0 not really a JPEG"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Run(ctx, chromedp.SetUploadFiles("#file", []string{jpeg}, chromedp.ByQuery)); err != nil {
		t.Fatal(err)
	}
	waitUntil(ctx, t, "the JPEG's error", `document.getElementById("predictError").textContent.includes("image/jpeg is not supported")`,
		20*time.Second)
	var seen struct {
		Error                  string
		Contrast               float64
		Results, Pad, ErrorBox struct{ Left, Top, Right, Bottom float64 }
	}
	if err := chromedp.Run(ctx, chromedp.Evaluate(`(() => {
		const box = (id) => {
			const r = document.getElementById(id).getBoundingClientRect();
			return { Left: r.left, Top: r.top, Right: r.right, Bottom: r.bottom };
		};
		// Relative luminance of a CSS rgb() colour, and the colour behind an element.
		const rgb = (css) => css.match(/[0-9.]+/g).map(Number);
		const luminance = (css) => {
			const [r, g, b] = rgb(css).slice(0, 3).map((c) => {
				c /= 255;
				return c <= 0.03928 ? c / 12.92 : Math.pow((c + 0.055) / 1.055, 2.4);
			});
			return 0.2126 * r + 0.7152 * g + 0.0722 * b;
		};
		let behind = document.getElementById("predictError");
		while (behind && (rgb(getComputedStyle(behind).backgroundColor)[3] === 0)) behind = behind.parentElement;
		const back = luminance(behind ? getComputedStyle(behind).backgroundColor : "rgb(255, 255, 255)");
		const fore = luminance(getComputedStyle(document.getElementById("predictError")).color);
		return {
			Error: document.getElementById("predictError").textContent,
			Contrast: (Math.max(back, fore) + 0.05) / (Math.min(back, fore) + 0.05),
			Results: box("results"), Pad: box("draw"), ErrorBox: box("predictError"),
		};
	})()`, &seen)); err != nil {
		t.Fatal(err)
	}
	t.Logf("the refusal reads %q, at a contrast of %.1f:1", seen.Error, seen.Contrast)
	if seen.Contrast < 7 {
		t.Errorf("the refusal's error has a contrast of %.1f:1 with the page; want at least 7:1", seen.Contrast)
	}
	if seen.Results.Left < seen.Pad.Right || seen.Results.Top >= seen.Pad.Bottom || seen.ErrorBox.Right > seen.Results.Right+0.5 {
		t.Errorf("with the refusal's error the answer's column (%v, the error %v) is not beside the pad (%v)",
			seen.Results, seen.ErrorBox, seen.Pad)
	}
	if err := chromedp.Run(ctx, chromedp.Click("#clear", chromedp.ByQuery)); err != nil {
		t.Fatal(err)
	}
	waitUntil(ctx, t, "no error after Clear", `document.getElementById("predictError").textContent === ""`, 5*time.Second)
}

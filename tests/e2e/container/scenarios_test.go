package container_test

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"pstrain/tests/e2e/harness"
	"pstrain/tests/e2e/podrun"
)

// TestScenarios runs each scenario on a cluster of its own: its own node directory, its pods
// started afresh and removed at its end.
func TestScenarios(t *testing.T) {
	t.Run("cluster", cluster)
	t.Run("workers first", workersFirst)
	t.Run("reinstall", reinstall)
	t.Run("helm test", helmTest)
	t.Run("ps killed", psKilled)
	t.Run("worker cut off", workerCutOff)
}

// scenario is a new cluster, and the scenario's deadline.
func scenario(t *testing.T) (context.Context, *dockerCluster) {
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	t.Cleanup(cancel)
	return ctx, newDockerCluster(t)
}

// cluster: all pods start together, in a shuffled order, and train to the last step (the
// scenario every cluster shares), each pod with the limits and security context values.yml
// gives, and every pod stops cleanly on SIGTERM.
func cluster(t *testing.T) {
	ctx, c := scenario(t)
	harness.TrainToTheLastStep(ctx, t, c)
	if t.Failed() {
		return // the checks below would only meet the scenario's deadline
	}
	t.Run("every pod: its hostname, values.yml's limits (200m CPU, 125Mi), user 10001, read-only root, no capabilities, one BLAS thread", func(t *testing.T) {
		for _, pod := range harness.AllPods {
			got, err := docker(ctx, "inspect", "--format", "{{.Config.Hostname}} cpus={{.HostConfig.NanoCpus}} memory={{.HostConfig.Memory}} user={{.Config.User}} readonly={{.HostConfig.ReadonlyRootfs}} capdrop={{.HostConfig.CapDrop}}", pod)
			want := pod + " cpus=200000000 memory=131072000 user=10001:10001 readonly=true capdrop=[ALL]"
			if strings.TrimSpace(got) != want || err != nil {
				t.Errorf("docker inspect %s: %q (%v), want %q", pod, strings.TrimSpace(got), err, want)
			}
			// OpenBLAS threads beyond the CPU limit only wait for work, spinning away the quota.
			if f, err := harness.PodFacts(c, pod); f.BlasThreads != 1 || err != nil {
				t.Errorf("%s runs %d BLAS threads (%v), want 1", pod, f.BlasThreads, err)
			}
		}
	})
	t.Run("every pod exits 0 on SIGTERM (pod deletion), recording it", func(t *testing.T) {
		c.stopKubelet() // first, so that no liveness probe restarts a stopping container
		if out, err := docker(ctx, append([]string{"stop"}, harness.AllPods...)...); err != nil {
			t.Fatal(out, err)
		}
		pods, err := c.Pods(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range harness.AllPods {
			p := pods[name]
			f, err := harness.PodFacts(c, name)
			if p.Running || p.Restarts != 0 || p.OOMKilled || p.ExitCode != 0 || err != nil || !f.Stopped {
				t.Errorf("%s, stopped event: %t (%v)", p.Summary, f.Stopped, err)
			}
		}
	})
}

// workersFirst: the workers start before any ps exists, wait for the ps DNS names without a
// restart, and train once the ps pods start.
func workersFirst(t *testing.T) {
	ctx, c := scenario(t)
	// A run id of its own, as Install gives: podrun has no API server to read a ConfigMap's UID.
	if _, err := c.render(ctx, "--set", "runId=workers-first"); err != nil {
		t.Fatal(err)
	}
	if err := c.start("mnist-worker"); err != nil {
		t.Fatal(err)
	}
	t.Run("worker 0 records that it waits for the ps DNS names while no ps exists", func(t *testing.T) {
		err := harness.Until(ctx, "a waiting event for a DNS name in worker 0's events", func() (bool, string, error) {
			if broken, err := harness.Unhealthy(ctx, c, harness.WorkerPods...); err != nil || broken != "" {
				return false, broken, errors.Join(err, errors.New("a worker is not healthy"))
			}
			if out, err := docker(ctx, "ps", "--all", "--quiet", "--filter", "name=^mnist-ps-"); err != nil || out != "" {
				return false, out, errors.Join(err, errors.New("a ps exists"))
			}
			line := harness.WaitingForDNS(c, "mnist-worker-0")
			return line != "", line, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		t.Log(harness.WaitingForDNS(c, "mnist-worker-0"))
	})
	t.Run("once the ps pods start, training reaches its last global step", func(t *testing.T) {
		if err := c.start("mnist-ps"); err != nil {
			t.Fatal(err)
		}
		if _, err := harness.WaitTrained(ctx, c, ""); err != nil {
			t.Fatal(err, "\n", harness.Tails(c, harness.AllPods...))
		}
	})
	t.Run("the workers waited without a restart", func(t *testing.T) {
		if broken, err := harness.Unhealthy(ctx, c, harness.WorkerPods...); err != nil || broken != "" {
			t.Error(broken, err)
		}
	})
}

// reinstall: a completed run uninstalled and installed again on the same node trains a new run
// (the scenario every cluster shares).
func reinstall(t *testing.T) {
	ctx, c := scenario(t)
	harness.ReinstallTrainsANewRun(ctx, t, c)
}

// helmTest: the chart's test pod succeeds while the cluster trains, and fails with pstrain's
// one line and exit code 4, within its timeout, once the ps containers are stopped.
func helmTest(t *testing.T) {
	ctx, c := scenario(t)
	// A run far longer than this scenario, so it trains throughout.
	const steps = 100000
	if err := c.Install(ctx, "--set", fmt.Sprintf("hyperparams.trainsteps=%d", steps)); err != nil {
		t.Fatal(err)
	}
	t.Run("helm test succeeds while the cluster trains", func(t *testing.T) {
		// As `helm install` then `helm test`: the test starts with the pods and waits for progress.
		out, err := c.Test(ctx)
		if err != nil {
			t.Fatalf("helm test: %v\n%s", err, out)
		}
		for _, target := range []string{"mnist-ps-0.mnist-ps:8090 ps 0", "mnist-ps-1.mnist-ps:8090 ps 1", "mnist-worker-0.mnist-worker:8090 worker 0"} {
			if !regexp.MustCompile(fmt.Sprintf(`(?m)^%s: training: global step [1-9]\d*/%d\b`, regexp.QuoteMeta(target), steps)).MatchString(out) {
				t.Errorf("the test pod's output has no progress of %s:\n%s", target, out)
			}
		}
		// Worker 0's /predict is there, and says it has no model while it trains.
		if !regexp.MustCompile(`(?m)^  predict: 503 no model yet: worker 0 serves it once training has completed$`).MatchString(out) {
			t.Errorf("the test pod's output has no /predict answer of worker 0:\n%s", out)
		}
		t.Log("\n" + out)
	})
	t.Run("after the test the cluster is still training (pstrain status in mnist-worker-0)", func(t *testing.T) {
		out, err := c.Exec(ctx, "mnist-worker-0", "pstrain", "status", "localhost:8090")
		m := regexp.MustCompile(fmt.Sprintf(`worker 0: training: global step (\d+)/%d\b`, steps)).FindStringSubmatch(out)
		if err != nil || m == nil {
			t.Fatalf("pstrain status: %v\n%s", err, out)
		}
		if step, _ := strconv.Atoi(m[1]); step <= 0 || step >= steps {
			t.Errorf("worker 0 at global step %d of %d", step, steps)
		}
		t.Log(strings.SplitN(out, "\n", 2)[0])
	})
	t.Run("with the ps stopped, helm test fails within its timeout, exit code 4, with one line", func(t *testing.T) {
		c.stopKubelet() // first, so that no liveness probe restarts a stopped ps
		if out, err := docker(ctx, "stop", "mnist-ps-0", "mnist-ps-1"); err != nil {
			t.Fatal(out, err)
		}
		// The same test pod, rendered with a short timeout.
		const timeout = 3
		rendered, err := c.render(ctx, "--set", fmt.Sprintf("hyperparams.trainsteps=%d,test.timeoutSeconds=%d", steps, timeout),
			"--show-only", "templates/tests/pod.yaml")
		if err != nil {
			t.Fatal(err)
		}
		m, err := podrun.ReadManifests(strings.NewReader(rendered))
		if err != nil {
			t.Fatal(err)
		}
		began := time.Now()
		testCtx, cancel := context.WithTimeout(ctx, time.Minute)
		defer cancel()
		out, err := runTest(testCtx, podrun.New(podrun.Config{Network: network, NodeRoot: c.node, Report: c.record}, m))
		took := time.Since(began)
		lines := strings.Split(strings.TrimSpace(out), "\n")
		oneLine := regexp.MustCompile(fmt.Sprintf(`^pstrain: mnist-ps-[01]\.mnist-ps:8090: .+ after waiting %d s$`, timeout))
		if err == nil || !strings.Contains(err.Error(), "exit code 4") || len(lines) != 1 || !oneLine.MatchString(lines[0]) ||
			took > (timeout+15)*time.Second {
			t.Fatalf("helm test without the ps: %v after %v; want exit code 4 and one line naming a ps, within %d s:\n%s", err, took.Round(time.Second), timeout+15, out)
		}
		t.Logf("failed in %v: %s", took.Round(time.Second), lines[0])
	})
}

// psKilled: mnist-ps-1's container killed a third into the run, then the pod recreated as a
// StatefulSet does (the scenario every cluster shares, with a pod deleted).
func psKilled(t *testing.T) {
	ctx, c := scenario(t)
	harness.PSDeletedComesBack(ctx, t, c, 20000) // about 16 s of training at 200m per pod
}

// workerCutOff: mnist-worker-0's pod is disconnected from the network for 5 s early in the run,
// then connected again with its DNS names: no pod restarts, worker 0 pauses, and training
// completes. The steps left after the cut are many more than worker 1 alone makes during the
// outage (at 6,000 left it once finished them, and worker 0 then had no step after the outage to
// show its pause): 200m of CPU holds one worker below about 1,000 global steps/s on any host,
// and the whole run takes about 35 s at the ~1,250 of two.
func workerCutOff(t *testing.T) {
	ctx, c := scenario(t)
	const steps = 40000
	const cutAt = 1000
	const outage = 5 * time.Second
	// The pod's network namespace is its sandbox's.
	const sandbox = "mnist-worker-0-sandbox"
	if err := c.Install(ctx, "--set", fmt.Sprintf("hyperparams.trainsteps=%d", steps)); err != nil {
		t.Fatal(err)
	}
	var reconnected time.Time
	cut := t.Run("mnist-worker-0 cut off for 5 s early in the run, then connected again with its DNS names", func(t *testing.T) {
		at, err := harness.WaitFacts(ctx, c, "mnist-worker-0", fmt.Sprintf("worker 0 at global step %d", cutAt),
			func(f harness.Facts) bool { return f.Step >= cutAt })
		if err != nil {
			t.Fatal(err)
		}
		names, err := aliases(ctx, sandbox)
		if err != nil || len(names) == 0 {
			t.Fatalf("the DNS names of %s: %v %v", sandbox, names, err)
		}
		before, _ := address(ctx, sandbox)
		if out, err := docker(ctx, "network", "disconnect", network, sandbox); err != nil {
			t.Fatal(out, err)
		}
		time.Sleep(outage) // the fault: no network for this long
		args := []string{"network", "connect"}
		for _, name := range names {
			args = append(args, "--alias", name)
		}
		if out, err := docker(ctx, append(args, network, sandbox)...); err != nil {
			t.Fatal(out, err)
		}
		reconnected = time.Now()
		if again, err := aliases(ctx, sandbox); err != nil || !slices.Equal(again, names) {
			t.Fatalf("after docker network connect, %s's DNS names are %v (%v), not %v", sandbox, again, err, names)
		}
		after, _ := address(ctx, sandbox)
		t.Logf("cut off at global step %d for %v, then connected again with its DNS names %v (address %s, then %s)",
			at.Step, outage, names, before, after)
	})
	if !cut {
		return
	}
	t.Run("training completes", func(t *testing.T) {
		r, err := harness.WaitTrained(ctx, c, "")
		if err != nil {
			t.Fatal(err, "\n", harness.Tails(c, harness.AllPods...))
		}
		t.Logf("global step %d, test accuracy %.4f", r.GlobalStep, r.TestAccuracy)
	})
	t.Run("no pod was restarted (the outage is shorter than the liveness probe's tolerance)", func(t *testing.T) {
		if broken, err := harness.Unhealthy(ctx, c, harness.AllPods...); err != nil || broken != "" {
			t.Error(broken, err)
		}
	})
	t.Run("worker 0 made no step while cut off", func(t *testing.T) {
		w0, err := harness.PodFacts(c, "mnist-worker-0")
		if err != nil {
			t.Fatal(err)
		}
		if n := len(w0.StepTimes); n == 0 || !w0.StepTimes[n-1].After(reconnected) {
			t.Fatalf("worker 0 made no step after it was connected again (%s): the run ended during "+
				"the outage, so it shows no pause (the scenario needs a longer run)", reconnected.Format("15:04:05.000"))
		}
		pause, after := w0.LongestPause()
		if pause < outage-time.Second {
			t.Errorf("worker 0's longest pause between steps was %v (after %s)", pause, after.Format("15:04:05"))
		}
		t.Logf("worker 0's longest pause between steps: %v after %s", pause.Round(100*time.Millisecond), after.Format("15:04:05"))
		var events []harness.Event
		for _, pod := range harness.AllPods {
			f, err := harness.PodFacts(c, pod)
			if err != nil {
				t.Fatal(err)
			}
			events = append(append(events, f.Lost...), f.Reconnected...)
		}
		if len(events) == 0 {
			t.Log("no lost or reconnected connection recorded: the connections stalled and resumed")
		} else {
			t.Log("\n" + harness.Lines(events))
		}
	})
}

// aliases are a container's DNS names on the network, without those Docker adds itself (its
// name, short id and hostname).
func aliases(ctx context.Context, container string) ([]string, error) {
	out, err := docker(ctx, "inspect", "--format",
		fmt.Sprintf(`{{.Id}} {{.Config.Hostname}} {{range (index .NetworkSettings.Networks %q).Aliases}} {{.}}{{end}}`, network), container)
	fields := strings.Fields(out)
	if err != nil || len(fields) < 2 {
		return nil, fmt.Errorf("docker inspect %s: %q %v", container, out, err)
	}
	var names []string
	for _, name := range fields[2:] {
		if name != container && name != fields[0][:12] && name != fields[1] && !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return names, nil
}

func address(ctx context.Context, container string) (string, error) {
	out, err := docker(ctx, "inspect", "--format", fmt.Sprintf(`{{(index .NetworkSettings.Networks %q).IPAddress}}`, network), container)
	return strings.TrimSpace(out), err
}

package kind_test

import (
	"context"
	"errors"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"pstrain/tests/e2e/cluster"
	"pstrain/tests/e2e/harness"
)

// The scenarios shared with the container end-to-end test (tests/e2e/container), on the kind
// cluster through kubeCluster. A deleted ps is TestHelmTestAndDeletedPods's, with the checks
// only Kubernetes makes possible (the StatefulSet's new pod, helm test meanwhile).

func TestSharedTrainToTheLastStep(t *testing.T) {
	t.Parallel()
	ctx, c := sharedScenario(t, "pstrain-train")
	harness.TrainToTheLastStep(ctx, t, c)
}

func TestSharedReinstallTrainsANewRun(t *testing.T) {
	t.Parallel()
	ctx, c := sharedScenario(t, "pstrain-reinstall")
	harness.ReinstallTrainsANewRun(ctx, t, c)
}

// sharedScenario is the release about to be installed in namespace, and the scenario's deadline.
func sharedScenario(t *testing.T, namespace string) (context.Context, *kubeCluster) {
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout+2*trainTimeout)
	t.Cleanup(cancel)
	return ctx, &kubeCluster{newRelease(t, namespace, 0)}
}

// kubeCluster is harness.Cluster on Kubernetes: helm and kubectl on a release in a namespace of
// its own.
type kubeCluster struct{ r *release }

func (k *kubeCluster) Install(ctx context.Context, set ...string) error {
	if res := k.r.helm("install", set...); res.Err != nil {
		return errors.New(res.String())
	}
	k.r.installed = true
	res := kind.Run(repo, "helm", "get", "manifest", releaseName, "--namespace", k.r.namespace)
	if res.Err != nil {
		return errors.New(res.String())
	}
	var err error
	k.r.trainSteps, err = harness.TrainSteps(res.Stdout)
	return err
}

func (k *kubeCluster) TrainSteps() int { return k.r.trainSteps }

func (k *kubeCluster) Pods(ctx context.Context) (map[string]harness.Pod, error) {
	pods, err := k.r.pods()
	if err != nil {
		return nil, err
	}
	states := map[string]harness.Pod{}
	for name, p := range pods {
		s := harness.Pod{Name: name, Ready: cluster.Ready(p), Summary: cluster.Describe(p)}
		for _, c := range p.Status.ContainerStatuses {
			s.Running = p.DeletionTimestamp == nil && c.State.Running != nil
			s.Restarts += int(c.RestartCount)
			if last := c.LastTerminationState.Terminated; last != nil {
				s.OOMKilled, s.ExitCode = last.Reason == "OOMKilled", int(last.ExitCode)
			}
		}
		states[name] = s
	}
	return states, nil
}

func (k *kubeCluster) Exec(ctx context.Context, pod string, command ...string) (string, error) {
	res := k.r.exec(pod, command...)
	if res.Err != nil {
		return res.Stdout, errors.New(res.String())
	}
	return res.Stdout, nil
}

// DeletePod is `kubectl delete pod`; it returns once the StatefulSet's new pod of that name runs.
func (k *kubeCluster) DeletePod(ctx context.Context, pod string) error {
	before, err := k.r.pods()
	if err != nil {
		return err
	}
	if res := kind.Kubectl("delete", "pod", "--namespace", k.r.namespace, pod); res.Err != nil {
		return errors.New(res.String())
	}
	return harness.Until(ctx, "a new "+pod+" running", func() (bool, string, error) {
		pods, err := k.r.pods()
		p, found := pods[pod]
		return found && p.UID != before[pod].UID && p.Status.Phase == corev1.PodRunning, describeAll(pods), err
	})
}

func (k *kubeCluster) Test(ctx context.Context) (string, error) {
	res := kind.Run(repo, "helm", "test", releaseName, "--namespace", k.r.namespace, "--logs")
	if res.Err != nil {
		return res.Stdout, errors.New(res.String())
	}
	return res.Stdout, nil
}

// LogDir is the host's directory that is every worker node's /tmp/mnist/<namespace>.
func (k *kubeCluster) LogDir() string { return k.r.logDir() }

// Uninstall is `helm uninstall`; it returns when the release's pods are gone.
func (k *kubeCluster) Uninstall(ctx context.Context) error {
	if res := k.r.uninstall(); res.Err != nil {
		return errors.New(res.String())
	}
	return nil
}

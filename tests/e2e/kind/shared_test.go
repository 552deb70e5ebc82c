package kind_test

import (
	"context"
	"errors"
	"testing"

	"pstrain/tests/e2e/cluster"
	"pstrain/tests/e2e/harness"
)

// The scenarios of package harness, on the kind cluster through kubeCluster.

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
				s.OOMKilled = last.Reason == "OOMKilled"
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

// LogDir is the host's directory that is every worker node's /tmp/mnist/<namespace>.
func (k *kubeCluster) LogDir() string { return k.r.logDir() }

// Uninstall is `helm uninstall`; it returns when the release's pods are gone.
func (k *kubeCluster) Uninstall(ctx context.Context) error {
	if res := k.r.uninstall(); res.Err != nil {
		return errors.New(res.String())
	}
	return nil
}

package kind_test

import "testing"

// `helm uninstall`, then `helm install` with the same values: a new run.
//
// PENDING: the chart is being changed (on another branch) to give each install its own run;
// until then a new install with the same values finds the old run completed in the nodes' log
// directory and trains nothing. Once merged: install, wait for the run to complete, helm
// uninstall (pods gone, logs left on the nodes), helm install with the same values; the new pods
// must train a new run to its last step (no ps restores the old run's checkpoint; worker 0's
// status goes from training to completed at the last step).
func TestReinstallTrainsANewRun(t *testing.T) {
	t.Skip("pending: the chart's own run per install (a change on another branch)")
}

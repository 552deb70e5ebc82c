// Package container_test runs the chart's pods as Docker containers, the way a kubelet would
// (package podrun), on a machine without Kubernetes, and checks what a user would see: pods
// that start, become ready and train to the last step, their logs, their containers' states,
// faults (a ps killed, a worker cut off the network, the ps gone under helm test) and what
// follows them. ci/e2e.sh builds the image and runs these tests; it sets:
//
//	PSTRAIN_E2E_IMAGE    the pstrain image under test, on this machine's Docker
//	PSTRAIN_E2E_HELM     the helm binary that renders the chart
//	PSTRAIN_E2E_TIMEOUT  the seconds each scenario may take (default 600)
//
// Without the first two the scenarios are skipped. The pods have the chart's names (mnist-ps-0
// …) on the Docker network pstrain-e2e, so one run at a time on a Docker Engine (ci/e2e.sh
// takes a lock), and the scenarios run one after another.
package container_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

var (
	image, helm string
	// repo is the repository's root, where the chart and values.yml are.
	repo string
	// deadline is how long each scenario may take.
	deadline = 600 * time.Second
)

func TestMain(m *testing.M) {
	image, helm = os.Getenv("PSTRAIN_E2E_IMAGE"), os.Getenv("PSTRAIN_E2E_HELM")
	if image == "" || helm == "" {
		fmt.Println("PSTRAIN_E2E_IMAGE or PSTRAIN_E2E_HELM is not set (ci/e2e.sh sets them): the container scenarios are skipped")
		os.Exit(0)
	}
	if s := os.Getenv("PSTRAIN_E2E_TIMEOUT"); s != "" {
		seconds, err := strconv.Atoi(s)
		if err != nil || seconds <= 0 {
			fmt.Printf("PSTRAIN_E2E_TIMEOUT=%q is not a number of seconds\n", s)
			os.Exit(2)
		}
		deadline = time.Duration(seconds) * time.Second
	}
	var err error
	if repo, err = filepath.Abs("../../.."); err != nil {
		fmt.Println(err)
		os.Exit(1)
	}
	os.Exit(m.Run())
}

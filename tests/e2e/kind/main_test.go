// Package kind_test runs the README's "Run on Kubernetes" commands against a real cluster: a kind
// cluster of the repository's kind-config.yml that ci/kind-e2e.sh starts (see package cluster for
// the environment it sets). Without one, the tests are skipped.
//
// Each scenario installs the chart as release mnist from the repository's chart/ and values.yml,
// with the image under test, in a namespace of its own (TestReadme in default, as the README
// does), and removes it at its end (helm uninstall, its pods gone, its directory on the nodes
// deleted), so scenarios start alike and may run alone (go test -run). They run in parallel:
// values.yml's CPU limits leave most of the machine idle while one release trains.
package kind_test

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"pstrain/tests/e2e/cluster"
)

var (
	kind *cluster.Cluster
	// repo is the repository's root: the README's commands run from there.
	repo string
)

func TestMain(m *testing.M) {
	var err error
	kind, err = cluster.FromEnv()
	if err != nil {
		fmt.Println("no cluster, the kind scenarios are skipped:", err)
		os.Exit(0)
	}
	if repo, err = filepath.Abs("../../.."); err != nil {
		fmt.Println(err)
		os.Exit(1)
	}
	os.Exit(m.Run())
}

var (
	loadOnce   sync.Once
	loadResult cluster.Result
)

// loadImage is the README's `kind load docker-image` of the image under test, once for all
// scenarios; it fails the test when kind failed.
func loadImage(t *testing.T) {
	t.Helper()
	loadOnce.Do(func() {
		loadResult = kind.Run(repo, "kind", "load", "docker-image", "--name", kind.Name, kind.Image)
	})
	if loadResult.Err != nil {
		t.Fatalf("kind load docker-image failed:\n%s", loadResult)
	}
}

package podrun

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// Manifests are the objects of a rendered chart that decide how its StatefulSets' pods and its
// helm test pods run.
type Manifests struct {
	statefulSets []appsv1.StatefulSet
	// testPods are the Pods annotated as helm test hooks (helm.sh/hook: test).
	testPods   []corev1.Pod
	services   map[string]corev1.Service
	configMaps map[string]corev1.ConfigMap
	secrets    map[string]corev1.Secret
	// ignored names the other objects ("Kind/name"), which no pod depends on here.
	ignored []string
}

// ReadManifests decodes a multi-document YAML stream such as `helm template` prints, strictly:
// a field the Kubernetes API types do not have is an error.
func ReadManifests(r io.Reader) (*Manifests, error) {
	m := &Manifests{services: map[string]corev1.Service{}, configMaps: map[string]corev1.ConfigMap{},
		secrets: map[string]corev1.Secret{}}
	reader := utilyaml.NewYAMLReader(bufio.NewReader(r))
	for {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			return m, nil
		}
		if err != nil {
			return nil, fmt.Errorf("reading the manifests: %w", err)
		}
		var object struct {
			metav1.TypeMeta `json:",inline"`
			Metadata        metav1.ObjectMeta `json:"metadata"`
		}
		if err := yaml.Unmarshal(doc, &object); err != nil {
			return nil, fmt.Errorf("decoding a manifest: %w", err)
		}
		kind := object.APIVersion + "/" + object.Kind
		switch kind {
		case "/":
			continue // an empty document
		case "apps/v1/StatefulSet":
			var set appsv1.StatefulSet
			err = yaml.UnmarshalStrict(doc, &set)
			m.statefulSets = append(m.statefulSets, set)
		case "v1/Service":
			var service corev1.Service
			err = yaml.UnmarshalStrict(doc, &service)
			m.services[service.Name] = service
		case "v1/ConfigMap":
			var configMap corev1.ConfigMap
			err = yaml.UnmarshalStrict(doc, &configMap)
			m.configMaps[configMap.Name] = configMap
		case "v1/Pod":
			var p corev1.Pod
			if err = yaml.UnmarshalStrict(doc, &p); err == nil {
				if isTestHook(p.Annotations) {
					m.testPods = append(m.testPods, p)
				} else {
					m.ignored = append(m.ignored, object.Kind+"/"+object.Metadata.Name)
				}
			}
		case "v1/Secret":
			var secret corev1.Secret
			err = yaml.UnmarshalStrict(doc, &secret)
			m.secrets[secret.Name] = secret
		default:
			m.ignored = append(m.ignored, object.Kind+"/"+object.Metadata.Name)
		}
		if err != nil {
			return nil, fmt.Errorf("decoding %s %s: %w", kind, object.Metadata.Name, err)
		}
	}
}

// isTestHook tells whether an object's annotations make it a helm test hook: helm.sh/hook lists
// "test" (or Helm 2's "test-success").
func isTestHook(annotations map[string]string) bool {
	for _, hook := range strings.Split(annotations["helm.sh/hook"], ",") {
		if hook = strings.TrimSpace(hook); hook == "test" || hook == "test-success" {
			return true
		}
	}
	return false
}

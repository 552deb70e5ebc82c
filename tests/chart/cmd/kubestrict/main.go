// Command kubestrict validates a stream of Kubernetes manifests (helm template output) offline.
//
// Every document is decoded strictly into its k8s.io/api type, as the API server does with
// field validation set to Strict: an unknown or misspelt field, a duplicate field, a value of
// the wrong type or a malformed quantity is an error. On top of that it runs the API server's
// checks this chart can get wrong: object names, label syntax, selectors matching their pod
// templates, container port names, and pod volume and mount consistency. With -pod-security it
// also evaluates every pod as Pod Security admission would at that level.
//
// Usage: helm template … | kubestrict [-pod-security baseline|restricted]
package main

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metavalidation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes/scheme"
	psa "k8s.io/pod-security-admission/api"
	"k8s.io/pod-security-admission/policy"
)

func main() {
	level := flag.String("pod-security", "", "also check every pod against this Pod Security level (baseline or restricted)")
	flag.Parse()
	v := validator{decoder: serializer.NewCodecFactory(scheme.Scheme, serializer.EnableStrict).UniversalDeserializer()}
	if *level != "" {
		if err := v.enablePodSecurity(*level); err != nil {
			fmt.Fprintln(os.Stderr, "kubestrict:", err)
			os.Exit(2)
		}
	}
	failed, err := v.validateStream(os.Stdin, os.Stdout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "kubestrict:", err)
		os.Exit(2)
	}
	if failed > 0 {
		fmt.Printf("%d invalid document(s)\n", failed)
		os.Exit(1)
	}
}

type validator struct {
	decoder runtime.Decoder
	// podSecurity evaluates pods at podSecurityLevel; nil when not asked for.
	podSecurity      policy.Evaluator
	podSecurityLevel psa.LevelVersion
}

func (v *validator) enablePodSecurity(level string) error {
	l, err := psa.ParseLevel(level)
	if err != nil {
		return err
	}
	evaluator, err := policy.NewEvaluator(policy.DefaultChecks(), nil)
	if err != nil {
		return err
	}
	v.podSecurity = evaluator
	v.podSecurityLevel = psa.LevelVersion{Level: l, Version: psa.LatestVersion()}
	return nil
}

// validateStream checks every document of r, reporting each one on out; it returns how many failed.
func (v *validator) validateStream(r io.Reader, out io.Writer) (int, error) {
	reader := utilyaml.NewYAMLReader(bufio.NewReader(r))
	documents, failed := 0, 0
	for {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return failed, err
		}
		if isEmpty(doc) {
			continue
		}
		documents++
		name, errs := v.validateDocument(doc)
		if len(errs) == 0 {
			fmt.Fprintf(out, "valid   %s\n", name)
			continue
		}
		failed++
		fmt.Fprintf(out, "INVALID %s (%s)\n", name, source(doc))
		for _, e := range errs {
			fmt.Fprintf(out, "  %v\n", e)
		}
	}
	if documents == 0 {
		return failed, errors.New("no documents on stdin")
	}
	return failed, nil
}

// isEmpty reports whether a document holds only comments and blank lines.
func isEmpty(doc []byte) bool {
	for _, line := range strings.Split(string(doc), "\n") {
		line = strings.TrimSpace(line)
		if line != "" && line != "---" && !strings.HasPrefix(line, "#") {
			return false
		}
	}
	return true
}

// source is the template a document came from, from helm's "# Source:" comment.
func source(doc []byte) string {
	for _, line := range strings.Split(string(doc), "\n") {
		if s, ok := strings.CutPrefix(line, "# Source: "); ok {
			return s
		}
	}
	return "no source comment"
}

func (v *validator) validateDocument(doc []byte) (string, []error) {
	obj, gvk, err := v.decoder.Decode(bytes.TrimSpace(doc), nil, nil)
	if err != nil {
		name := "document"
		if gvk != nil {
			name = gvk.Kind
		}
		return name, []error{err}
	}
	meta, err := metaOf(obj)
	if err != nil {
		return gvk.Kind, []error{err}
	}
	name := gvk.Kind + " " + meta.Name
	errs := validateMeta(meta)
	switch o := obj.(type) {
	case *appsv1.StatefulSet:
		path := field.NewPath("spec")
		errs = append(errs, validateSelector(o.Spec.Selector, o.Spec.Template.Labels, path)...)
		if o.Spec.ServiceName == "" {
			errs = append(errs, field.Required(path.Child("serviceName"), "a StatefulSet's pods get DNS names from it"))
		}
		errs = append(errs, validateLabels(o.Spec.Template.Labels, path.Child("template", "metadata", "labels"))...)
		errs = append(errs, validatePodSpec(&o.Spec.Template.Spec, path.Child("template", "spec"))...)
		errs = append(errs, v.checkPodSecurity(&o.Spec.Template.ObjectMeta, &o.Spec.Template.Spec)...)
	case *corev1.Pod:
		errs = append(errs, validatePodSpec(&o.Spec, field.NewPath("spec"))...)
		errs = append(errs, v.checkPodSecurity(&o.ObjectMeta, &o.Spec)...)
	case *corev1.Service:
		for i, p := range o.Spec.Ports {
			errs = append(errs, validatePortName(p.Name, field.NewPath("spec", "ports").Index(i).Child("name"))...)
		}
	}
	return name, errs
}

func (v *validator) checkPodSecurity(meta *metav1.ObjectMeta, spec *corev1.PodSpec) []error {
	if v.podSecurity == nil {
		return nil
	}
	var errs []error
	for _, result := range v.podSecurity.EvaluatePod(v.podSecurityLevel, meta, spec) {
		if !result.Allowed {
			errs = append(errs, fmt.Errorf("violates Pod Security %q: %s (%s)", v.podSecurityLevel.Level, result.ForbiddenReason, result.ForbiddenDetail))
		}
	}
	return errs
}

func metaOf(obj runtime.Object) (*metav1.ObjectMeta, error) {
	accessor, ok := obj.(interface{ GetObjectMeta() metav1.Object })
	if !ok {
		return nil, fmt.Errorf("%T has no object metadata", obj)
	}
	meta, ok := accessor.GetObjectMeta().(*metav1.ObjectMeta)
	if !ok {
		return nil, fmt.Errorf("%T has unexpected metadata", obj)
	}
	return meta, nil
}

func validateMeta(meta *metav1.ObjectMeta) []error {
	path := field.NewPath("metadata")
	var errs []error
	for _, msg := range validation.IsDNS1123Subdomain(meta.Name) {
		errs = append(errs, field.Invalid(path.Child("name"), meta.Name, msg))
	}
	// The release namespace comes from helm install --namespace, never from a template.
	if meta.Namespace != "" {
		errs = append(errs, field.Forbidden(path.Child("namespace"), "templates must not set a namespace"))
	}
	return append(errs, validateLabels(meta.Labels, path.Child("labels"))...)
}

func validateLabels(set map[string]string, path *field.Path) []error {
	return toErrors(metavalidation.ValidateLabels(set, path))
}

func validateSelector(selector *metav1.LabelSelector, podLabels map[string]string, path *field.Path) []error {
	if selector == nil || (len(selector.MatchLabels) == 0 && len(selector.MatchExpressions) == 0) {
		return []error{field.Required(path.Child("selector"), "")}
	}
	s, err := metav1.LabelSelectorAsSelector(selector)
	if err != nil {
		return []error{field.Invalid(path.Child("selector"), selector, err.Error())}
	}
	if !s.Matches(labels.Set(podLabels)) {
		return []error{field.Invalid(path.Child("template", "metadata", "labels"), podLabels, "does not match the selector")}
	}
	return nil
}

func validatePortName(name string, path *field.Path) []error {
	var errs []error
	for _, msg := range validation.IsValidPortName(name) {
		errs = append(errs, field.Invalid(path, name, msg))
	}
	return errs
}

// validatePodSpec checks what the API server checks about volumes, mounts and ports.
func validatePodSpec(spec *corev1.PodSpec, path *field.Path) []error {
	var errs []error
	volumes := map[string]bool{}
	for i, v := range spec.Volumes {
		p := path.Child("volumes").Index(i).Child("name")
		for _, msg := range validation.IsDNS1123Label(v.Name) {
			errs = append(errs, field.Invalid(p, v.Name, msg))
		}
		if volumes[v.Name] {
			errs = append(errs, field.Duplicate(p, v.Name))
		}
		volumes[v.Name] = true
	}
	check := func(containers []corev1.Container, kind string) {
		for i, c := range containers {
			cp := path.Child(kind).Index(i)
			mountPaths := map[string]bool{}
			for j, m := range c.VolumeMounts {
				mp := cp.Child("volumeMounts").Index(j)
				if !volumes[m.Name] {
					errs = append(errs, field.NotFound(mp.Child("name"), m.Name))
				}
				if mountPaths[m.MountPath] {
					errs = append(errs, field.Duplicate(mp.Child("mountPath"), m.MountPath))
				}
				mountPaths[m.MountPath] = true
				if m.SubPath != "" && m.SubPathExpr != "" {
					errs = append(errs, field.Invalid(mp.Child("subPathExpr"), m.SubPathExpr, "subPathExpr and subPath are mutually exclusive"))
				}
			}
			for j, p := range c.Ports {
				if p.Name != "" {
					errs = append(errs, validatePortName(p.Name, cp.Child("ports").Index(j).Child("name"))...)
				}
			}
		}
	}
	check(spec.InitContainers, "initContainers")
	check(spec.Containers, "containers")
	return errs
}

func toErrors(list field.ErrorList) []error {
	errs := make([]error, 0, len(list))
	for _, e := range list {
		errs = append(errs, e)
	}
	return errs
}

// Command kubestrict validates a stream of Kubernetes manifests (helm template output) offline.
//
// Every document is decoded strictly into its k8s.io/api type, as the API server does with
// field validation set to Strict: an unknown or misspelt field, a duplicate field, a value of
// the wrong type or a malformed quantity is an error. On top of that it runs the API server's
// checks this chart can get wrong: object names, label syntax, selectors matching their pod
// templates, container port names, and pod volume and mount consistency. With -pod-security it
// also evaluates every pod as Pod Security admission would at that level.
//
// Across documents it checks what would fail only at run time: a probe naming a port its
// container does not have, a Service whose named targetPort no selected pod template has, a
// ServiceMonitor that selects no Service of the stream or names a port those Services lack, a
// PodMonitor that selects no pod template of the stream or names a port their containers lack, a
// PodDisruptionBudget that selects no pod template of the stream, and
// a secret or configMap volume asking for a key its Secret or ConfigMap of the stream lacks.
//
// ServiceMonitor and PodMonitor (monitoring.coreos.com/v1) are custom resources: they are decoded
// strictly into the Prometheus Operator's own Go types (github.com/prometheus-operator/
// prometheus-operator/pkg/apis/monitoring), and their durations are checked against the pattern
// of the operator's CRDs. Any other kind the scheme does not know is an error.
//
// With -labels it also requires every document, and every pod template, to carry those labels.
//
// Usage: helm template … | kubestrict [-pod-security baseline|restricted] [-labels k=v,…]
package main

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"sort"
	"strings"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metavalidation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	psa "k8s.io/pod-security-admission/api"
	"k8s.io/pod-security-admission/policy"
)

func main() {
	level := flag.String("pod-security", "", "also check every pod against this Pod Security level (baseline or restricted)")
	required := flag.String("labels", "", "labels key=value,… every document and every pod template must carry")
	flag.Parse()
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, monitoringv1.AddToScheme} {
		if err := add(scheme); err != nil {
			fmt.Fprintln(os.Stderr, "kubestrict:", err)
			os.Exit(2)
		}
	}
	v := validator{decoder: serializer.NewCodecFactory(scheme, serializer.EnableStrict).UniversalDeserializer()}
	if *required != "" {
		set, err := labels.ConvertSelectorToLabelsMap(*required)
		if err != nil {
			fmt.Fprintln(os.Stderr, "kubestrict: -labels:", err)
			os.Exit(2)
		}
		v.requiredLabels = set
	}
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
	// requiredLabels must be on every document and pod template; nil when not asked for.
	requiredLabels labels.Set
}

func (v *validator) enablePodSecurity(level string) error {
	l, err := psa.ParseLevel(level)
	if err != nil {
		return err
	}
	evaluator, err := policy.NewEvaluator(policy.DefaultChecks())
	if err != nil {
		return err
	}
	v.podSecurity = evaluator
	v.podSecurityLevel = psa.LevelVersion{Level: l, Version: psa.LatestVersion()}
	return nil
}

// document is one manifest of the stream: its name for the report, the template it came from,
// what it decoded to (nil if it did not) and the problems found.
type document struct {
	name, source string
	obj          runtime.Object
	errs         []error
}

// validateStream checks every document of r, then the references between them, reporting each
// document on out; it returns how many failed.
func (v *validator) validateStream(r io.Reader, out io.Writer) (int, error) {
	reader := utilyaml.NewYAMLReader(bufio.NewReader(r))
	var docs []*document
	for {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return 0, err
		}
		if isEmpty(doc) {
			continue
		}
		d := &document{source: source(doc)}
		d.name, d.obj, d.errs = v.validateDocument(doc)
		docs = append(docs, d)
	}
	if len(docs) == 0 {
		return 0, errors.New("no documents on stdin")
	}
	crossCheck(docs)
	failed := 0
	for _, d := range docs {
		if len(d.errs) == 0 {
			fmt.Fprintf(out, "valid   %s\n", d.name)
			continue
		}
		failed++
		fmt.Fprintf(out, "INVALID %s (%s)\n", d.name, d.source)
		for _, e := range d.errs {
			fmt.Fprintf(out, "  %v\n", e)
		}
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

func (v *validator) validateDocument(doc []byte) (string, runtime.Object, []error) {
	obj, gvk, err := v.decoder.Decode(bytes.TrimSpace(doc), nil, nil)
	if err != nil {
		name := "document"
		if gvk != nil {
			name = gvk.Kind
		}
		return name, nil, []error{err}
	}
	meta, err := metaOf(obj)
	if err != nil {
		return gvk.Kind, nil, []error{err}
	}
	name := gvk.Kind + " " + meta.Name
	errs := validateMeta(meta)
	errs = append(errs, v.checkRequiredLabels(meta.Labels, field.NewPath("metadata", "labels"))...)
	if template := podTemplateOf(obj); template != nil {
		errs = append(errs, v.checkRequiredLabels(template.Labels, field.NewPath("spec", "template", "metadata", "labels"))...)
	}
	switch o := obj.(type) {
	case *appsv1.StatefulSet:
		path := field.NewPath("spec")
		errs = append(errs, validateSelector(o.Spec.Selector, o.Spec.Template.Labels, path)...)
		if o.Spec.ServiceName == "" {
			errs = append(errs, field.Required(path.Child("serviceName"), "a StatefulSet's pods get DNS names from it"))
		}
		errs = append(errs, validateLabels(o.Spec.Template.Labels, path.Child("template", "metadata", "labels"))...)
		claims, claimErrs := validateClaimTemplates(o.Spec.VolumeClaimTemplates, path.Child("volumeClaimTemplates"))
		errs = append(errs, claimErrs...)
		errs = append(errs, validatePodSpec(&o.Spec.Template.Spec, path.Child("template", "spec"), claims...)...)
		errs = append(errs, v.checkPodSecurity(&o.Spec.Template.ObjectMeta, &o.Spec.Template.Spec)...)
	case *corev1.Pod:
		errs = append(errs, validatePodSpec(&o.Spec, field.NewPath("spec"))...)
		errs = append(errs, v.checkPodSecurity(&o.ObjectMeta, &o.Spec)...)
	case *corev1.Secret:
		for key := range o.Data {
			errs = append(errs, validateDataKey(key, field.NewPath("data").Key(key))...)
		}
		for key := range o.StringData {
			errs = append(errs, validateDataKey(key, field.NewPath("stringData").Key(key))...)
		}
	case *corev1.ConfigMap:
		for key := range o.Data {
			errs = append(errs, validateDataKey(key, field.NewPath("data").Key(key))...)
		}
	case *corev1.Service:
		for i, p := range o.Spec.Ports {
			errs = append(errs, validatePortName(p.Name, field.NewPath("spec", "ports").Index(i).Child("name"))...)
		}
	case *monitoringv1.ServiceMonitor:
		errs = append(errs, validateServiceMonitor(o)...)
	case *monitoringv1.PodMonitor:
		errs = append(errs, validatePodMonitor(o)...)
	case *policyv1.PodDisruptionBudget:
		errs = append(errs, validatePodDisruptionBudget(o)...)
	}
	return name, obj, errs
}

// promDuration is the pattern of a Prometheus duration in the Prometheus Operator's CRDs
// (monitoringv1.Duration, +kubebuilder:validation:Pattern), which the API server enforces.
var promDuration = regexp.MustCompile(`^(0|(([0-9]+)y)?(([0-9]+)w)?(([0-9]+)d)?(([0-9]+)h)?(([0-9]+)m)?(([0-9]+)s)?(([0-9]+)ms)?)$`)

// validateServiceMonitor checks what the ServiceMonitor CRD's schema requires of the fields this
// chart sets: a selector, endpoints naming a Service port, and well-formed durations.
func validateServiceMonitor(sm *monitoringv1.ServiceMonitor) []error {
	path := field.NewPath("spec")
	var errs []error
	if len(sm.Spec.Selector.MatchLabels) == 0 && len(sm.Spec.Selector.MatchExpressions) == 0 {
		errs = append(errs, field.Required(path.Child("selector"), "an empty selector scrapes every Service of the namespace"))
	} else if _, err := metav1.LabelSelectorAsSelector(&sm.Spec.Selector); err != nil {
		errs = append(errs, field.Invalid(path.Child("selector"), sm.Spec.Selector, err.Error()))
	}
	if len(sm.Spec.Endpoints) == 0 {
		errs = append(errs, field.Required(path.Child("endpoints"), ""))
	}
	for i, e := range sm.Spec.Endpoints {
		ep := path.Child("endpoints").Index(i)
		if e.Port == "" {
			errs = append(errs, field.Required(ep.Child("port"), "the name of a Service port"))
		}
		for _, d := range []struct {
			name  string
			value monitoringv1.Duration
		}{{"interval", e.Interval}, {"scrapeTimeout", e.ScrapeTimeout}} {
			if !promDuration.MatchString(string(d.value)) {
				errs = append(errs, field.Invalid(ep.Child(d.name), string(d.value), "not a Prometheus duration such as 30s or 1m30s"))
			}
		}
	}
	return errs
}

// validatePodMonitor checks what the PodMonitor CRD's schema requires of the fields this chart
// sets: a selector, endpoints naming a container port, and well-formed durations.
func validatePodMonitor(pm *monitoringv1.PodMonitor) []error {
	path := field.NewPath("spec")
	var errs []error
	if len(pm.Spec.Selector.MatchLabels) == 0 && len(pm.Spec.Selector.MatchExpressions) == 0 {
		errs = append(errs, field.Required(path.Child("selector"), "an empty selector scrapes every pod of the namespace"))
	} else if _, err := metav1.LabelSelectorAsSelector(&pm.Spec.Selector); err != nil {
		errs = append(errs, field.Invalid(path.Child("selector"), pm.Spec.Selector, err.Error()))
	}
	if len(pm.Spec.PodMetricsEndpoints) == 0 {
		errs = append(errs, field.Required(path.Child("podMetricsEndpoints"), ""))
	}
	for i, e := range pm.Spec.PodMetricsEndpoints {
		ep := path.Child("podMetricsEndpoints").Index(i)
		if e.Port == nil || *e.Port == "" {
			errs = append(errs, field.Required(ep.Child("port"), "the name of a container port"))
		}
		for _, d := range []struct {
			name  string
			value monitoringv1.Duration
		}{{"interval", e.Interval}, {"scrapeTimeout", e.ScrapeTimeout}} {
			if !promDuration.MatchString(string(d.value)) {
				errs = append(errs, field.Invalid(ep.Child(d.name), string(d.value), "not a Prometheus duration such as 30s or 1m30s"))
			}
		}
	}
	return errs
}

// validatePodDisruptionBudget checks what the API server checks of the fields this chart sets:
// a selector, and one of minAvailable and maxUnavailable, a non-negative number or a percentage.
func validatePodDisruptionBudget(pdb *policyv1.PodDisruptionBudget) []error {
	path := field.NewPath("spec")
	var errs []error
	if pdb.Spec.Selector == nil || (len(pdb.Spec.Selector.MatchLabels) == 0 && len(pdb.Spec.Selector.MatchExpressions) == 0) {
		errs = append(errs, field.Required(path.Child("selector"), "an empty selector selects every pod of the namespace"))
	} else if _, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector); err != nil {
		errs = append(errs, field.Invalid(path.Child("selector"), pdb.Spec.Selector, err.Error()))
	}
	if (pdb.Spec.MinAvailable == nil) == (pdb.Spec.MaxUnavailable == nil) {
		errs = append(errs, field.Invalid(path, "", "exactly one of minAvailable and maxUnavailable"))
	}
	for name, v := range map[string]*intstr.IntOrString{"minAvailable": pdb.Spec.MinAvailable, "maxUnavailable": pdb.Spec.MaxUnavailable} {
		if v == nil {
			continue
		}
		if v.Type == intstr.Int && v.IntVal < 0 {
			errs = append(errs, field.Invalid(path.Child(name), v.IntVal, "must be non-negative"))
		}
		if v.Type == intstr.String {
			for _, msg := range validation.IsValidPercent(v.StrVal) {
				errs = append(errs, field.Invalid(path.Child(name), v.StrVal, msg))
			}
		}
	}
	return errs
}

// crossCheck adds to docs the problems of references between them: probe ports to container
// ports, Service target ports to the ports of the pod templates they select, ServiceMonitors to
// Services and their ports.
func crossCheck(docs []*document) {
	type podTemplate struct {
		labels map[string]string
		spec   *corev1.PodSpec
	}
	var templates []podTemplate
	var services []*corev1.Service
	dataKeys := map[string]map[string]bool{} // "Secret/name" and "ConfigMap/name": their keys
	for _, d := range docs {
		switch o := d.obj.(type) {
		case *corev1.Secret:
			keys := keysOf(o.Data, o.StringData)
			if o.Type == corev1.SecretTypeServiceAccountToken {
				// The token controller writes these into it once it exists.
				for _, key := range []string{corev1.ServiceAccountTokenKey, corev1.ServiceAccountRootCAKey, corev1.ServiceAccountNamespaceKey} {
					keys[key] = true
				}
			}
			dataKeys["Secret/"+o.Name] = keys
		case *corev1.ConfigMap:
			dataKeys["ConfigMap/"+o.Name] = keysOf(o.Data, o.BinaryData)
		}
	}
	for _, d := range docs {
		switch o := d.obj.(type) {
		case *appsv1.StatefulSet:
			templates = append(templates, podTemplate{o.Spec.Template.Labels, &o.Spec.Template.Spec})
			path := field.NewPath("spec", "template", "spec")
			d.errs = append(d.errs, validateProbePorts(&o.Spec.Template.Spec, path)...)
			d.errs = append(d.errs, validateVolumeKeys(&o.Spec.Template.Spec, path, dataKeys)...)
		case *corev1.Pod:
			d.errs = append(d.errs, validateProbePorts(&o.Spec, field.NewPath("spec"))...)
			d.errs = append(d.errs, validateVolumeKeys(&o.Spec, field.NewPath("spec"), dataKeys)...)
		case *corev1.Service:
			services = append(services, o)
		}
	}
	for _, d := range docs {
		switch o := d.obj.(type) {
		case *corev1.Service:
			selector := labels.SelectorFromSet(o.Spec.Selector)
			for i, p := range o.Spec.Ports {
				if p.TargetPort.Type != intstr.String {
					continue
				}
				for _, t := range templates {
					if len(o.Spec.Selector) > 0 && selector.Matches(labels.Set(t.labels)) && !hasContainerPort(t.spec, p.TargetPort.StrVal) {
						d.errs = append(d.errs, field.NotFound(field.NewPath("spec", "ports").Index(i).Child("targetPort"), p.TargetPort.StrVal))
					}
				}
			}
		case *monitoringv1.PodMonitor:
			selector, err := metav1.LabelSelectorAsSelector(&o.Spec.Selector)
			if err != nil || selector.Empty() {
				continue // reported by validatePodMonitor
			}
			selected := 0
			for _, t := range templates {
				if !selector.Matches(labels.Set(t.labels)) {
					continue
				}
				selected++
				for i, e := range o.Spec.PodMetricsEndpoints {
					if e.Port != nil && *e.Port != "" && !hasContainerPort(t.spec, *e.Port) {
						d.errs = append(d.errs, field.Invalid(field.NewPath("spec", "podMetricsEndpoints").Index(i).Child("port"), *e.Port, "a selected pod template has no container port of that name"))
					}
				}
			}
			if selected == 0 {
				d.errs = append(d.errs, field.Invalid(field.NewPath("spec", "selector"), o.Spec.Selector, "selects none of the pod templates rendered with it"))
			}
		case *policyv1.PodDisruptionBudget:
			selector, err := metav1.LabelSelectorAsSelector(o.Spec.Selector)
			if err != nil || selector.Empty() {
				continue // reported by validatePodDisruptionBudget
			}
			selects := false
			for _, t := range templates {
				selects = selects || selector.Matches(labels.Set(t.labels))
			}
			if !selects {
				d.errs = append(d.errs, field.Invalid(field.NewPath("spec", "selector"), o.Spec.Selector, "selects none of the pod templates rendered with it"))
			}
		case *monitoringv1.ServiceMonitor:
			selector, err := metav1.LabelSelectorAsSelector(&o.Spec.Selector)
			if err != nil || selector.Empty() {
				continue // reported by validateServiceMonitor
			}
			var selected []*corev1.Service
			for _, s := range services {
				if selector.Matches(labels.Set(s.Labels)) {
					selected = append(selected, s)
				}
			}
			if len(selected) == 0 {
				d.errs = append(d.errs, field.Invalid(field.NewPath("spec", "selector"), o.Spec.Selector, "selects none of the Services rendered with it"))
			}
			for i, e := range o.Spec.Endpoints {
				if e.Port == "" {
					continue
				}
				for _, s := range selected {
					if !hasServicePort(s, e.Port) {
						d.errs = append(d.errs, field.Invalid(field.NewPath("spec", "endpoints").Index(i).Child("port"), e.Port, "Service "+s.Name+" has no port of that name"))
					}
				}
			}
		}
	}
}

// validateProbePorts checks that every probe naming a port names one of its container's ports:
// the API server accepts any valid name, and the kubelet fails the probe at run time.
func validateProbePorts(spec *corev1.PodSpec, path *field.Path) []error {
	var errs []error
	for i, c := range spec.Containers {
		cp := path.Child("containers").Index(i)
		named := map[string]bool{}
		for _, p := range c.Ports {
			named[p.Name] = true
		}
		for _, p := range []struct {
			name  string
			probe *corev1.Probe
		}{{"livenessProbe", c.LivenessProbe}, {"readinessProbe", c.ReadinessProbe}, {"startupProbe", c.StartupProbe}} {
			name, probe := p.name, p.probe
			if probe == nil {
				continue
			}
			var port *intstr.IntOrString
			switch {
			case probe.HTTPGet != nil:
				port = &probe.HTTPGet.Port
			case probe.TCPSocket != nil:
				port = &probe.TCPSocket.Port
			}
			if port != nil && port.Type == intstr.String && !named[port.StrVal] {
				errs = append(errs, field.NotFound(cp.Child(name, "port"), port.StrVal))
			}
		}
	}
	return errs
}

// keysOf is the set of keys of a Secret's or ConfigMap's two data maps.
func keysOf[A, B any](a map[string]A, b map[string]B) map[string]bool {
	keys := map[string]bool{}
	for k := range a {
		keys[k] = true
	}
	for k := range b {
		keys[k] = true
	}
	return keys
}

// validateVolumeKeys checks that the items of every secret and configMap volume whose Secret or
// ConfigMap is in the stream name keys it has: the API server accepts any key, and the kubelet
// then cannot mount the volume and the pod never starts. A Secret or ConfigMap outside the
// stream (one the user provides) is not checked.
func validateVolumeKeys(spec *corev1.PodSpec, path *field.Path, dataKeys map[string]map[string]bool) []error {
	var errs []error
	for i, v := range spec.Volumes {
		var ref string
		var items []corev1.KeyToPath
		var optional *bool
		switch {
		case v.Secret != nil:
			ref, items, optional = "Secret/"+v.Secret.SecretName, v.Secret.Items, v.Secret.Optional
		case v.ConfigMap != nil:
			ref, items, optional = "ConfigMap/"+v.ConfigMap.Name, v.ConfigMap.Items, v.ConfigMap.Optional
		default:
			continue
		}
		keys, found := dataKeys[ref]
		if !found || (optional != nil && *optional) {
			continue
		}
		for j, item := range items {
			if !keys[item.Key] {
				errs = append(errs, field.NotFound(path.Child("volumes").Index(i).Child("items").Index(j).Child("key"), ref+" has no key "+item.Key))
			}
		}
	}
	return errs
}

// validateClaimTemplates checks a StatefulSet's volumeClaimTemplates as the API server checks a
// PersistentVolumeClaim (a name, access modes, a storage request) and returns their names, which
// the pod template's mounts may name as volumes.
func validateClaimTemplates(claims []corev1.PersistentVolumeClaim, path *field.Path) ([]string, []error) {
	var names []string
	var errs []error
	for i, c := range claims {
		p := path.Index(i)
		for _, msg := range validation.IsDNS1123Label(c.Name) {
			errs = append(errs, field.Invalid(p.Child("metadata", "name"), c.Name, msg))
		}
		errs = append(errs, validateLabels(c.Labels, p.Child("metadata", "labels"))...)
		if len(c.Spec.AccessModes) == 0 {
			errs = append(errs, field.Required(p.Child("spec", "accessModes"), ""))
		}
		if _, ok := c.Spec.Resources.Requests[corev1.ResourceStorage]; !ok {
			errs = append(errs, field.Required(p.Child("spec", "resources", "requests", "storage"), ""))
		}
		names = append(names, c.Name)
	}
	return names, errs
}

func validateDataKey(key string, path *field.Path) []error {
	var errs []error
	for _, msg := range validation.IsConfigMapKey(key) {
		errs = append(errs, field.Invalid(path, key, msg))
	}
	return errs
}

func hasContainerPort(spec *corev1.PodSpec, name string) bool {
	for _, c := range spec.Containers {
		for _, p := range c.Ports {
			if p.Name == name {
				return true
			}
		}
	}
	return false
}

func hasServicePort(s *corev1.Service, name string) bool {
	for _, p := range s.Spec.Ports {
		if p.Name == name {
			return true
		}
	}
	return false
}

// podTemplateOf is the pod template of a workload, nil for other kinds.
func podTemplateOf(obj runtime.Object) *corev1.PodTemplateSpec {
	switch o := obj.(type) {
	case *appsv1.StatefulSet:
		return &o.Spec.Template
	case *appsv1.Deployment:
		return &o.Spec.Template
	case *appsv1.DaemonSet:
		return &o.Spec.Template
	}
	return nil
}

// checkRequiredLabels reports each label of -labels that set lacks or gives another value.
func (v *validator) checkRequiredLabels(set map[string]string, path *field.Path) []error {
	var errs []error
	for _, key := range sortedKeys(v.requiredLabels) {
		if got, ok := set[key]; !ok {
			errs = append(errs, field.Required(path.Key(key), "-labels asks for "+key+"="+v.requiredLabels[key]))
		} else if got != v.requiredLabels[key] {
			errs = append(errs, field.Invalid(path.Key(key), got, "-labels asks for "+v.requiredLabels[key]))
		}
	}
	return errs
}

func sortedKeys(set labels.Set) []string {
	keys := make([]string, 0, len(set))
	for k := range set {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
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

// validatePodSpec checks what the API server checks about volumes, mounts and ports. claims are
// the names of a StatefulSet's volumeClaimTemplates, which mounts may name too.
func validatePodSpec(spec *corev1.PodSpec, path *field.Path, claims ...string) []error {
	var errs []error
	volumes := map[string]bool{}
	for _, name := range claims {
		volumes[name] = true
	}
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

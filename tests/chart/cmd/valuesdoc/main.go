// Command valuesdoc checks that a chart's values are documented, in the form helm-docs reads.
//
// Every key of values.yaml that the chart defines (its schema lists it under properties) must
// have a comment whose last paragraph starts with the key's name: "# -- name …" for a value
// without sub-keys (helm-docs' marker of a description, which makes it a row of the README's
// values table) and "# name …" for a key whose sub-keys are the values (with the marker,
// helm-docs would list the whole object as one more row). Every value without sub-keys must be
// named, as `dotted.path`, in the first column of the table in the README's "## Values"
// section, and every path in that column must be such a value of values.yaml. Keys inside
// objects the chart passes through to Kubernetes (affinity, securityContext, …) are not checked.
//
// Usage: valuesdoc CHART_DIR
package main

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"
)

// schema is the part of a JSON schema that says which keys an object defines.
type schema struct {
	Ref        string             `json:"$ref"`
	AllOf      []*schema          `json:"allOf"`
	Properties map[string]*schema `json:"properties"`
	Defs       map[string]*schema `json:"definitions"`
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: valuesdoc CHART_DIR")
		os.Exit(2)
	}
	problems, err := check(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "valuesdoc:", err)
		os.Exit(2)
	}
	for _, p := range problems {
		fmt.Println(p)
	}
	if len(problems) > 0 {
		os.Exit(1)
	}
}

func check(chartDir string) ([]string, error) {
	var values yaml.Node
	if err := readYAML(filepath.Join(chartDir, "values.yaml"), &values); err != nil {
		return nil, err
	}
	var root schema
	raw, err := os.ReadFile(filepath.Join(chartDir, "values.schema.json"))
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(raw, &root); err != nil {
		return nil, fmt.Errorf("values.schema.json: %w", err)
	}
	readme, err := os.ReadFile(filepath.Join(chartDir, "README.md"))
	if err != nil {
		return nil, err
	}

	w := walker{defs: root.Defs, keys: map[string]bool{}}
	w.walk(values.Content[0], &root, "")
	problems := w.problems
	tablePaths := tableKeys(string(readme))
	for _, leaf := range w.leaves {
		if !tablePaths[leaf] {
			problems = append(problems, fmt.Sprintf("README.md: values table has no row for `%s`", leaf))
		}
	}
	leaves := map[string]bool{}
	for _, leaf := range w.leaves {
		leaves[leaf] = true
	}
	var extra []string
	for p := range tablePaths {
		switch {
		case !w.keys[p]:
			extra = append(extra, fmt.Sprintf("README.md: values table names `%s`, which is not in values.yaml", p))
		case !leaves[p]:
			extra = append(extra, fmt.Sprintf("README.md: values table names `%s`, whose sub-keys are the values (drop the \"--\" from its comment in values.yaml)", p))
		}
	}
	sort.Strings(extra)
	return append(problems, extra...), nil
}

func readYAML(path string, node *yaml.Node) error {
	raw, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := yaml.Unmarshal(raw, node); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if len(node.Content) == 0 || node.Content[0].Kind != yaml.MappingNode {
		return fmt.Errorf("%s: not a mapping", path)
	}
	return nil
}

type walker struct {
	defs     map[string]*schema
	keys     map[string]bool // every checked key path
	leaves   []string        // checked keys without checked sub-keys: the values
	problems []string
}

// properties are the keys s defines, following $ref and allOf; nil for a pass-through object.
func (w *walker) properties(s *schema) map[string]*schema {
	if s == nil {
		return nil
	}
	if s.Ref != "" {
		return w.properties(w.defs[strings.TrimPrefix(s.Ref, "#/definitions/")])
	}
	props := map[string]*schema{}
	for _, member := range s.AllOf {
		maps.Copy(props, w.properties(member))
	}
	maps.Copy(props, s.Properties)
	if len(props) == 0 {
		return nil
	}
	return props
}

// walk checks the keys of mapping, whose schema is s, at dotted path prefix.
func (w *walker) walk(mapping *yaml.Node, s *schema, prefix string) {
	props := w.properties(s)
	for i := 0; i+1 < len(mapping.Content); i += 2 {
		key, value := mapping.Content[i], mapping.Content[i+1]
		path := prefix + key.Value
		w.keys[path] = true
		child, known := props[key.Value]
		if !known {
			w.problems = append(w.problems, fmt.Sprintf("values.yaml:%d: `%s` is not in values.schema.json", key.Line, path))
			continue
		}
		parent := value.Kind == yaml.MappingNode && len(value.Content) > 0 && w.properties(child) != nil
		start := "# -- " + key.Value + " "
		if parent {
			start = "# " + key.Value + " "
		}
		if !commentStartsWith(key.HeadComment, start) {
			w.problems = append(w.problems, fmt.Sprintf("values.yaml:%d: `%s` needs a comment whose last paragraph starts with %q", key.Line, path, strings.TrimSpace(start)))
		}
		if parent {
			w.walk(value, child, path+".")
			continue
		}
		w.leaves = append(w.leaves, path)
	}
}

// typeOverride is helm-docs' way to give a value's type, "# -- (int) value is …", for a default
// such as null that does not show it.
var typeOverride = regexp.MustCompile(`^# -- \([a-z]+\) `)

// commentStartsWith reports whether the comment's last paragraph starts with start (after a type
// given to helm-docs).
func commentStartsWith(comment, start string) bool {
	paragraphs := strings.Split(strings.TrimSpace(comment), "\n\n")
	last := strings.TrimSpace(paragraphs[len(paragraphs)-1])
	return strings.HasPrefix(typeOverride.ReplaceAllString(last, "# -- "), start)
}

var backticked = regexp.MustCompile("`([^`]+)`")

// tableKeys are the backticked paths in the first column of the table in the README's
// "## Values" section.
func tableKeys(readme string) map[string]bool {
	keys := map[string]bool{}
	inValues := false
	for _, line := range strings.Split(readme, "\n") {
		if strings.HasPrefix(line, "## ") {
			inValues = strings.TrimSpace(line) == "## Values"
		}
		cells := strings.Split(line, "|")
		if !inValues || !strings.HasPrefix(line, "|") || len(cells) < 3 {
			continue
		}
		for _, m := range backticked.FindAllStringSubmatch(cells[1], -1) {
			keys[m[1]] = true
		}
	}
	return keys
}

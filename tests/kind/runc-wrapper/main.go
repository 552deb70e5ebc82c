// runc-wrapper is an OCI runtime for Docker that runs /usr/bin/runc without CAP_SYS_RESOURCE.
//
// On a machine whose capability bounding set lacks CAP_SYS_RESOURCE (some VMs), every
// `docker run --privileged` fails with "unable to apply caps": runc is asked for all
// capabilities, and cannot grant one it does not hold. kind runs its nodes that way. Registered
// with Docker as a runtime and given to kind's node containers only, this wrapper removes
// CAP_SYS_RESOURCE from the container's configuration (`runc create` and `runc run`: the bundle's
// config.json) or process (`runc exec --process`) and hands over to runc with the same arguments.
package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

const (
	runc    = "/usr/bin/runc"
	dropped = "CAP_SYS_RESOURCE"
)

func main() {
	if err := dropCapability(os.Args[1:]); err != nil {
		fmt.Fprintf(os.Stderr, "runc-wrapper: %v\n", err)
		os.Exit(1)
	}
	err := syscall.Exec(runc, append([]string{runc}, os.Args[1:]...), os.Environ())
	fmt.Fprintf(os.Stderr, "runc-wrapper: %s: %v\n", runc, err)
	os.Exit(1)
}

// dropCapability removes the capability from the file runc reads it from, if the command has one.
func dropCapability(args []string) error {
	file, err := specFile(args)
	if err != nil || file == "" {
		return err
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	if !bytes.Contains(data, []byte(dropped)) {
		return nil
	}
	decoder := json.NewDecoder(bytes.NewReader(data))
	decoder.UseNumber() // keep large integers (limits, ids) exactly as they are
	var spec map[string]any
	if err := decoder.Decode(&spec); err != nil {
		return fmt.Errorf("%s: %v", file, err)
	}
	process := spec // `exec --process` gives a process; a bundle's config.json holds one
	if p, ok := spec["process"].(map[string]any); ok {
		process = p
	}
	if caps, ok := process["capabilities"].(map[string]any); ok {
		for set, list := range caps {
			if names, ok := list.([]any); ok {
				kept := []any{}
				for _, name := range names {
					if name != dropped {
						kept = append(kept, name)
					}
				}
				caps[set] = kept
			}
		}
	}
	out, err := json.Marshal(spec)
	if err != nil {
		return err
	}
	return os.WriteFile(file, out, 0o600)
}

// specFile is the JSON file of a runc command line that grants capabilities: the bundle's
// config.json for create and run, the --process file for exec; "" for other commands.
func specFile(args []string) (string, error) {
	command, bundle, process := "", ".", ""
	for i := 0; i < len(args); i++ {
		arg := args[i]
		value := func() string {
			if i+1 < len(args) {
				i++
				return args[i]
			}
			return ""
		}
		switch {
		case command == "" && (arg == "create" || arg == "run" || arg == "exec"):
			command = arg
		case command == "" && (arg == "--root" || arg == "--log" || arg == "--log-format" || arg == "--criu"):
			value() // a global option's value, not a command
		case arg == "--bundle" || arg == "-b":
			bundle = value()
		case arg == "--process" || arg == "-p":
			process = value()
		default:
			if v, ok := strings.CutPrefix(arg, "--bundle="); ok {
				bundle = v
			} else if v, ok := strings.CutPrefix(arg, "--process="); ok {
				process = v
			}
		}
	}
	switch {
	case command == "create" || command == "run":
		return filepath.Join(bundle, "config.json"), nil
	case command == "exec" && process != "":
		return process, nil
	}
	return "", nil
}

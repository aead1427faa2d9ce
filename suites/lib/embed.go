// Package lib embeds benchci.libsonnet so that suites can import it from any
// directory, and so the helpers always match the binary that evaluates them.
package lib

import _ "embed"

// Benchci is the source of benchci.libsonnet.
//
//go:embed benchci.libsonnet
var Benchci string

// Name is the import path suites use: import 'benchci.libsonnet'.
const Name = "benchci.libsonnet"

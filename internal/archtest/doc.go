// Package archtest holds no code: its test keeps the module's layering
// (which package may link which) from drifting, by asking the go command
// what each package really links.
package archtest

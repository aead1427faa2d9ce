// Package archtest holds no code: its tests keep the module's shape from
// drifting. The layering (which package may link which) is checked by
// asking the go command what each package really links; the length of
// the hot paths' functions by parsing them.
package archtest

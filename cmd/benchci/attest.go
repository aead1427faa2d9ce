package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	intoto "github.com/in-toto/attestation/go/v1"
	"github.com/spf13/cobra"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/benchci/benchci/framework/result"
	"github.com/benchci/benchci/framework/suite"
	"github.com/benchci/benchci/framework/suitefile"
	"github.com/benchci/benchci/internal/gitrev"
	"github.com/benchci/benchci/internal/inputfile"
)

// sloPredicateType is benchci's own predicate type: the SLO verdicts a
// release was measured with, and what it was measured with. Not a type
// registered with in-toto.
const sloPredicateType = "https://benchci.dev/attestation/slo/v1"

// attestNow is the clock attest stamps and verify ages statements by;
// tests set it.
var attestNow = time.Now

// maxSubjectBytes bounds a file hashed as a subject: a results file or
// one the suite names (a data file is bounded the same as the run reads it).
const maxSubjectBytes = suitefile.MaxDataFile

// sloPredicate is the predicate of benchci's statements.
type sloPredicate struct {
	// Benchci is the version of benchci that made the statement.
	Benchci string `json:"benchci"`
	// Commit is the repository's HEAD when the statement was made; empty
	// outside a git repository.
	Commit string `json:"commit,omitempty"`
	// MadeAt is when the statement was made.
	MadeAt time.Time     `json:"madeAt"`
	Runs   []attestedRun `json:"runs"`
}

// attestedRun is one results file's claims.
type attestedRun struct {
	// Results is the results file's subject name.
	Results string        `json:"results"`
	Suite   attestedSuite `json:"suite"`
	// PolicySHA256 is the digest of the measured suite's policy (see
	// policyDigest): what decided its verdicts.
	PolicySHA256 string           `json:"policySha256"`
	SLOs         []attestedSLO    `json:"slos"`
	Capacity     *result.Capacity `json:"capacity,omitempty"`
	Cost         []attestedCost   `json:"cost,omitempty"`
	Target       attestedTarget   `json:"target"`
	Engine       *result.Engine   `json:"engine,omitempty"`
	Started      time.Time        `json:"started"`
	Finished     time.Time        `json:"finished"`
	Telemetry    []string         `json:"telemetry,omitempty"`
}

// attestedSuite is the suite measured. Definition is carried as a string
// so its bytes survive the predicate's JSON (a struct would reorder keys
// and round numbers): verify re-reads the policy from it.
type attestedSuite struct {
	Name string `json:"name"`
	// Path is the suite's path as the results record it; File its
	// subject's name, from the repository root.
	Path             string `json:"path"`
	File             string `json:"file"`
	Hash             string `json:"hash"`
	WorkloadHash     string `json:"workloadHash"`
	DefinitionSHA256 string `json:"definitionSha256"`
	Definition       string `json:"definition"`
}

type attestedSLO struct {
	Name         string  `json:"name"`
	Point        string  `json:"point"`
	Trial        int     `json:"trial,omitempty"`
	Measured     float64 `json:"measured"`
	Limit        float64 `json:"limit"`
	Unit         string  `json:"unit,omitempty"`
	Pass         bool    `json:"pass"`
	Inconclusive bool    `json:"inconclusive,omitempty"`
}

type attestedCost struct {
	Point string      `json:"point"`
	Trial int         `json:"trial,omitempty"`
	Cost  result.Cost `json:"cost"`
}

// attestedTarget is the server as the run saw it; its address is left
// out (it changes every run and may name an internal host).
type attestedTarget struct {
	Kind  string `json:"kind"`
	Model string `json:"model,omitempty"`
	// SimProfile names the simulator's profile, which fixes its model and
	// hardware, on sim targets.
	SimProfile string `json:"simProfile,omitempty"`
}

// Subject roles, in each subject's "role" annotation.
const (
	roleResults = "results"
	roleSuite   = "suite"
	roleImport  = "import"
	roleData    = "data"
	roleLaunch  = "launch"
	roleProfile = "profile"
)

func attestCmd() *cobra.Command {
	var out, predicateOut string
	var sf suiteFlags
	cmd := &cobra.Command{
		Use:   "attest RESULTS...",
		Short: "Write an in-toto statement binding SLO verdicts to the files they were measured with",
		Long: `attest writes an in-toto Statement v1 (JSON) about complete results files:
its subjects are the SHA-256 digests of the results files and of every file
their suites are made of (the suite file, the Jsonnet files it imports, its
data files, a simulator profile file, and each argument of a launched
server's command line that is a file in the repository, such as a vLLM
config); its predicate (type ` + sloPredicateType + `, benchci's own)
holds each suite's name, hashes, definition and policy digest, every SLO
verdict, the capacity and cost, the engine and target, the benchci version,
the git commit and the time it was made. Subjects are named by their paths
from the repository's root.

Run it in the checkout the results were measured in: the suite files are
evaluated again (with the same --tla-str and --ext-str) and must evaluate
to the suite the results record. Incomplete, virtual-time and shard
results are refused. benchci verify checks a statement against a checkout;
sign it with GitHub's artifact attestations (see docs/proving-a-release.md).`,
		Example: `  benchci attest --out results/attestation.intoto.json results/release-checklist.json
  benchci verify results/attestation.intoto.json`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts, err := sf.options()
			if err != nil {
				return err
			}
			st, err := attest(args, opts)
			if err != nil {
				return err
			}
			data, err := marshalProto(st)
			if err != nil {
				return err
			}
			if predicateOut != "" {
				p, err := marshalProto(st.GetPredicate())
				if err != nil {
					return err
				}
				if err := result.WriteFileAtomic(predicateOut, p); err != nil {
					return err
				}
			}
			if out == "" || out == "-" {
				_, err := cmd.OutOrStdout().Write(data)
				return err
			}
			if err := result.WriteFileAtomic(out, data); err != nil {
				return err
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "wrote %s (%d subjects, predicate %s)\n", out, len(st.GetSubject()), sloPredicateType)
			return nil
		},
	}
	cmd.Flags().StringVarP(&out, "out", "o", "", "write the statement to this file (empty or -: standard output)")
	cmd.Flags().StringVar(&predicateOut, "predicate", "", "also write the predicate alone to this file (for actions/attest's predicate-path)")
	sf.register(cmd)
	return cmd
}

// marshalProto writes m as indented JSON. protojson's own output varies
// its whitespace on purpose; re-indented, a statement reads the same
// every time.
func marshalProto(m proto.Message) ([]byte, error) {
	raw, err := protojson.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("encode the statement: %w", err)
	}
	var b bytes.Buffer
	if err := json.Indent(&b, raw, "", "  "); err != nil {
		return nil, fmt.Errorf("encode the statement: %w", err)
	}
	b.WriteByte('\n')
	return b.Bytes(), nil
}

// attest builds the statement about the results files at paths.
func attest(paths []string, opts suitefile.Options) (*intoto.Statement, error) {
	var files []*result.File
	for _, p := range paths {
		f, err := result.Read(p)
		if err != nil {
			return nil, &exitError{exitUsage, err}
		}
		if err := attestable(f); err != nil {
			return nil, &exitError{exitUsage, fmt.Errorf("%s: %w", p, err)}
		}
		files = append(files, f)
	}
	root := repoRoot(filepath.Dir(files[0].Suite.Path))
	if _, err := gitrev.Root(root); err != nil {
		root = repoRoot(".") // outside a repository: the working directory
	}
	pred := sloPredicate{Benchci: Version, MadeAt: attestNow().UTC().Truncate(time.Second)}
	if _, commit, err := gitrev.Resolve(root, "HEAD"); err == nil {
		pred.Commit = commit
	}
	subjects := &subjectSet{root: root}
	for i, f := range files {
		name, err := subjects.add(paths[i], roleResults)
		if err != nil {
			return nil, &exitError{exitUsage, err}
		}
		named, err := suiteFiles(f, opts)
		if err != nil {
			return nil, &exitError{exitUsage, fmt.Errorf("%s: %w", paths[i], err)}
		}
		for _, nf := range named {
			if _, err := subjects.add(nf.path, nf.role); err != nil {
				return nil, &exitError{exitUsage, fmt.Errorf("%s: %w", paths[i], err)}
			}
		}
		suiteName, err := relName(root, named[0].path)
		if err != nil {
			return nil, &exitError{exitUsage, err}
		}
		run, err := attestRun(name, suiteName, f)
		if err != nil {
			return nil, &exitError{exitUsage, fmt.Errorf("%s: %w", paths[i], err)}
		}
		pred.Runs = append(pred.Runs, run)
	}
	predicate, err := toStruct(pred)
	if err != nil {
		return nil, err
	}
	st := &intoto.Statement{
		Type:          intoto.StatementTypeUri,
		Subject:       subjects.list,
		PredicateType: sloPredicateType,
		Predicate:     predicate,
	}
	if err := st.Validate(); err != nil {
		return nil, fmt.Errorf("the statement made is not valid: %w", err)
	}
	return st, nil
}

// attestable refuses results that prove nothing about a release.
func attestable(f *result.File) error {
	switch {
	case f.Incomplete:
		return fmt.Errorf("an incomplete run (%s) proves nothing: attest a complete run", f.Error)
	case f.Virtual:
		return errors.New("a virtual-time run's figures are the simulated clock's, not measured: attest a measured run")
	case f.Shard != nil:
		return fmt.Errorf("shard %d of %d measured part of the load: merge the shards (benchci merge) and attest the merged results", f.Shard.Index, f.Shard.Count)
	case len(f.Points) == 0:
		return errors.New("it holds no measured point")
	case f.Suite.Path == "":
		return errors.New("it does not record its suite's file")
	}
	return nil
}

// attestRun is the predicate's account of one results file.
func attestRun(name, suiteFile string, f *result.File) (attestedRun, error) {
	def, err := compactJSON(f.Suite.Definition)
	if err != nil {
		return attestedRun{}, fmt.Errorf("the suite it records: %w", err)
	}
	s, err := suite.Decode(def)
	if err != nil {
		return attestedRun{}, fmt.Errorf("the suite it records does not decode: %w", err)
	}
	pd, err := policyDigest(s)
	if err != nil {
		return attestedRun{}, err
	}
	r := attestedRun{
		Results: name,
		Suite: attestedSuite{Name: f.Suite.Name, Path: filepath.ToSlash(f.Suite.Path), File: suiteFile, Hash: f.Suite.Hash, WorkloadHash: f.Suite.WorkloadHash,
			DefinitionSHA256: sha256Hex(def), Definition: string(def)},
		PolicySHA256: pd,
		Capacity:     f.Capacity,
		Target:       attestedTarget{Kind: f.Target.Kind, Model: f.Target.Model},
		Engine:       f.Engine,
		Started:      f.Started.UTC(),
		Finished:     f.Finished.UTC(),
	}
	if f.Target.Sim != nil {
		r.Target.SimProfile = f.Target.Sim.Name
	}
	for _, v := range f.SLOs {
		r.SLOs = append(r.SLOs, attestedSLO{Name: v.Name, Point: v.Point, Trial: v.Trial, Measured: v.Measured, Limit: v.Limit, Unit: v.Unit, Pass: v.Pass, Inconclusive: v.Inconclusive})
	}
	exporters := map[string]bool{}
	for _, p := range f.Points {
		if p.Cost != nil {
			r.Cost = append(r.Cost, attestedCost{Point: p.Label, Trial: p.Trial, Cost: *p.Cost})
		}
		for k := range p.Telemetry {
			// The exporters that reported the hardware ("dcgm"), not
			// their every figure: those are in the results file.
			e, _, _ := strings.Cut(k, ".")
			exporters[e] = true
		}
	}
	for e := range exporters {
		r.Telemetry = append(r.Telemetry, e)
	}
	slices.Sort(r.Telemetry)
	return r, nil
}

// policyDigest is the SHA-256 of the suite's policy, the fields that
// decide its verdicts, as canonical JSON (encoding/json sorts map keys).
func policyDigest(s *suite.Suite) (string, error) {
	p := struct {
		Tolerance map[string]string         `json:"tolerance"`
		SLOs      []suite.SLO               `json:"slos"`
		Trials    int                       `json:"trials"`
		Sweep     suite.Sweep               `json:"sweep"`
		Goodput   map[string]suite.Duration `json:"goodput"`
		Sanity    *suite.Sanity             `json:"sanity"`
	}{s.Tolerance, s.SLOs, s.Trials, s.Sweep, s.Goodput, s.Sanity}
	data, err := json.Marshal(p)
	if err != nil {
		return "", fmt.Errorf("the policy of suite %s: %w", s.Name, err)
	}
	return sha256Hex(data), nil
}

// namedFile is a file a suite is made of.
type namedFile struct{ path, role string }

// suiteFiles lists the files the suite f measured is made of, as this
// checkout holds them, the suite file first. The suite is evaluated again and must be the one
// measured: otherwise the files named now are not the ones it was made of.
func suiteFiles(f *result.File, opts suitefile.Options) ([]namedFile, error) {
	l, err := loadSuite(context.Background(), f.Suite.Path, opts)
	if err != nil {
		return nil, fmt.Errorf("its suite: %w", err)
	}
	var s *suite.Suite
	for _, v := range l.Variants() {
		if v.Hash == f.Suite.Hash {
			s = v.Suite
		}
	}
	if s == nil {
		return nil, fmt.Errorf("%s evaluates to another suite than the one measured (hash %.12s, the results record %.12s): attest a run of this checkout's suite, with the --tla-str and --ext-str it ran with", f.Suite.Path, l.Hash, f.Suite.Hash)
	}
	out := []namedFile{{l.Path, roleSuite}}
	for _, p := range l.Imports {
		out = append(out, namedFile{p, roleImport})
	}
	for _, d := range s.DataFiles() {
		switch {
		case *d.Path == "":
		case d.Dir:
			images, err := suite.ImageFiles(*d.Path)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", d.Field, err)
			}
			for _, p := range images {
				out = append(out, namedFile{p, roleData})
			}
		default:
			out = append(out, namedFile{*d.Path, roleData})
		}
	}
	t := s.Target
	if p, ok := strings.CutPrefix(t.Profile, suite.ProfileFilePrefix); ok && p != "" {
		out = append(out, namedFile{p, roleProfile})
	}
	if t.Spec != nil && t.Spec.Fitted != "" {
		out = append(out, namedFile{t.Spec.Fitted, roleProfile})
	}
	if lc := t.Launch; lc != nil {
		for _, arg := range lc.Command {
			// --config=serving/vllm.yaml names its file after the '='.
			for _, a := range []string{arg, afterEquals(arg)} {
				if a == "" {
					continue
				}
				p := a
				if !filepath.IsAbs(p) {
					p = filepath.Join(lc.Dir, p)
				}
				if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
					out = append(out, namedFile{p, roleLaunch})
				}
			}
		}
	}
	return out, nil
}

func afterEquals(arg string) string {
	if _, v, ok := strings.Cut(arg, "="); ok && strings.HasPrefix(arg, "-") {
		return v
	}
	return ""
}

// subjectSet collects subjects once each, named from the repository root.
type subjectSet struct {
	root string
	list []*intoto.ResourceDescriptor
}

func (s *subjectSet) add(path, role string) (string, error) {
	name, err := relName(s.root, path)
	if err != nil {
		return "", err
	}
	for _, d := range s.list {
		if d.GetName() == name {
			return name, nil
		}
	}
	sum, err := fileSHA256(path)
	if err != nil {
		return "", err
	}
	ann, err := structpb.NewStruct(map[string]any{"role": role})
	if err != nil {
		return "", err
	}
	s.list = append(s.list, &intoto.ResourceDescriptor{Name: name, Digest: map[string]string{"sha256": sum}, Annotations: ann})
	return name, nil
}

// repoRoot is the root of the git repository holding dir, or (outside
// one) the working directory for attest, dir itself for verify: subjects
// are named from it.
func repoRoot(dir string) string {
	if root, err := gitrev.Root(dir); err == nil {
		return root
	}
	if abs, err := filepath.Abs(dir); err == nil {
		return abs
	}
	return dir
}

// relName names path from root, slash-separated; a file outside root
// could not be found in another checkout, and is refused.
func relName(root, path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		abs = real
	}
	if real, err := filepath.EvalSymlinks(root); err == nil {
		root = real
	}
	rel, err := filepath.Rel(root, abs)
	if err != nil || !filepath.IsLocal(rel) {
		return "", fmt.Errorf("%s is outside the repository at %s: a statement names files a checkout holds", path, root)
	}
	return filepath.ToSlash(rel), nil
}

// fileSHA256 hashes a regular file as a stream, bounded.
func fileSHA256(path string) (string, error) {
	f, err := inputfile.Open(path, maxSubjectBytes)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("hash %s: %w", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

func compactJSON(raw []byte) ([]byte, error) {
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// toStruct turns the predicate into the statement's structpb.Struct.
func toStruct(p sloPredicate) (*structpb.Struct, error) {
	data, err := json.Marshal(p)
	if err != nil {
		return nil, fmt.Errorf("encode the predicate: %w", err)
	}
	var s structpb.Struct
	if err := protojson.Unmarshal(data, &s); err != nil {
		return nil, fmt.Errorf("encode the predicate: %w", err)
	}
	return &s, nil
}

package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/benchci/benchci/framework/sim"
)

func simCmd() *cobra.Command {
	var addr, profile string
	cmd := &cobra.Command{
		Use:   "sim",
		Short: "Serve the simulator over the OpenAI API for other clients",
		Long: `sim serves the embedded continuous-batching simulator on an OpenAI-compatible
API (/v1/completions, /v1/chat/completions, /v1/models, /health) until
interrupted, so other benchmark clients can be compared against benchci on
the same known server.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			p, ok := sim.Lookup(profile)
			if !ok {
				return &exitError{exitUsage, fmt.Errorf("parsing --profile: unknown profile %q (known: %s)", profile, strings.Join(sim.ProfileNames(), ", "))}
			}
			ctx := cmd.Context()
			u, err := sim.New(p).Listen(ctx, addr)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "serving simulator profile %s (model %q) at %s; Ctrl-C stops\n", p.Name, p.Model, u)
			<-ctx.Done()
			return nil
		},
	}
	cmd.Flags().StringVar(&addr, "addr", "127.0.0.1:8000", "address to listen on")
	cmd.Flags().StringVar(&profile, "profile", "llama3-8b-h100", "simulator profile ("+strings.Join(sim.ProfileNames(), ", ")+")")
	return cmd
}

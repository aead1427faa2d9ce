package main

import (
	"github.com/spf13/cobra"

	"github.com/benchci/benchci/framework/report"
)

func reportCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "report RESULT...",
		Short: "Print the table of results (or baseline) files",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			for _, path := range args {
				f, err := readReference(path)
				if err != nil {
					return err
				}
				if err := report.Table(cmd.OutOrStdout(), f); err != nil {
					return err
				}
			}
			return nil
		},
	}
}

package main

import (
	"fmt"
	"io"

	"gpusim/mirror"
)

const accuracySynopsis = "gpusim accuracy"

func cmdAccuracy(args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 {
		if args[0] == "-h" || args[0] == "--help" {
			fmt.Fprintln(stdout, "usage: "+accuracySynopsis+"\n\nPrints docs/accuracy.md: every published measurement a shipped topology covers, gpusim's prediction and the error.")
			return nil
		}
		return &usageError{fmt.Sprintf("gpusim accuracy: unexpected argument %q: it takes no arguments (usage: %s)", args[0], accuracySynopsis)}
	}
	rep, err := mirror.Accuracy(onEveryCPU)
	if err != nil {
		return &failError{err}
	}
	rep.WriteMarkdown(stdout)
	return nil
}

package main

import (
	"context"
	"flag"
	"fmt"
	"os"
)

// flags are the benchmark's settings.
type flags struct {
	backups     int
	segments    int
	seedWorkers int
	metaWorkers int
	cpuProfile  string
	keep        bool
}

func main() {
	if len(os.Args) == 3 && os.Args[1] == childMode {
		if err := runChild(os.Args[2]); err != nil {
			fmt.Fprintln(os.Stderr, "pass child:", err)
			os.Exit(1)
		}
		return
	}
	var f flags
	flag.IntVar(&f.backups, "backups", 10000, "base backups to seed")
	flag.IntVar(&f.segments, "segments", 100000, "binlog segments to seed")
	flag.IntVar(&f.seedWorkers, "seed-workers", 32, "concurrent uploads while seeding")
	flag.IntVar(&f.metaWorkers, "metadata-workers", 0, "metadata.json reads in flight during the pass (0: the pass's default)")
	flag.StringVar(&f.cpuProfile, "cpuprofile", "", "write the pass child's CPU profile to this file")
	flag.BoolVar(&f.keep, "keep", false, "keep the S3 server's directory")
	flag.Parse()
	if f.backups < 2 || f.segments < 0 {
		fmt.Fprintln(os.Stderr, "want at least 2 backups")
		os.Exit(2)
	}
	if err := run(context.Background(), f); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

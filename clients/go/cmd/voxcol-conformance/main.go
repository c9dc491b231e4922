// Command voxcol-conformance runs one scenario of the voxcol client conformance suite
// (tests/conformance/README.md) through the Go client library and writes one JSON line per
// step:
//
//	voxcol-conformance --target HOST:PORT --scenario FILE --out FILE
//	                   [--secure_target HOST:PORT --ca CA_PEM_FILE --token TOKEN]
//
// With --throughput_seconds N it instead measures how many rays per second the library's
// Batcher gets answered (256-ray packed batches, at most 4 in flight) and prints
// rays_per_second=<number>:
//
//	voxcol-conformance --throughput_seconds 5 --target HOST:PORT
package main

import (
	"flag"
	"fmt"
	"os"
	"time"
)

func main() {
	var (
		target       = flag.String("target", "", "plaintext server, HOST:PORT")
		scenario     = flag.String("scenario", "", "scenario file (JSON)")
		out          = flag.String("out", "", "where to write the step results (JSON lines)")
		secureTarget = flag.String("secure_target", "", "TLS server with tokens, HOST:PORT, for secure scenarios")
		ca           = flag.String("ca", "", "PEM file of the CA that signed the secure server's certificate")
		token        = flag.String("token", "", "bearer token for the secure server")
		seconds      = flag.Float64("throughput_seconds", 0, "measure batched raycast throughput for this many seconds instead")
	)
	flag.Parse()
	if flag.NArg() > 0 {
		fail("unexpected arguments %q", flag.Args())
	}
	if *target == "" {
		fail("--target is required")
	}
	if *seconds > 0 {
		rate, err := throughput(*target, time.Duration(*seconds*float64(time.Second)))
		if err != nil {
			fail("throughput: %v", err)
		}
		fmt.Printf("rays_per_second=%.0f\n", rate)
		return
	}
	if *scenario == "" || *out == "" {
		fail("--scenario and --out are required")
	}
	r := runner{target: *target, secureTarget: *secureTarget, caFile: *ca, token: *token}
	if err := r.run(*scenario, *out); err != nil {
		fail("%v", err)
	}
}

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "voxcol-conformance: "+format+"\n", args...)
	os.Exit(2)
}

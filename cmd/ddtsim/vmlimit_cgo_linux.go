//go:build linux && cgo

package main

/*
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <unistd.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

// Below DDTSIM_MIN_AS bytes of address space the Go runtime cannot start
// (measured with Go 1.26 on linux/amd64: it fails below 800 MB, starts
// from there; a few limits above, 1.2 GB, fail in the runtime too).
// DDTSIM_ADVISED_AS is the limit the message advises.
#define DDTSIM_MIN_AS (800ULL << 20)
#define DDTSIM_ADVISED_AS (1536ULL << 20)

// ddtsim_vm_limit runs before the Go runtime starts (a constructor of
// the C side of this program): under a limit of virtual memory
// (RLIMIT_AS, ulimit -v) it makes the threads to come cheaper in address
// space, or says that the limit is too low and exits.
__attribute__((constructor)) static void ddtsim_vm_limit(void) {
	struct rlimit rl;
	if (getrlimit(RLIMIT_AS, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY) {
		return;
	}
	if (rl.rlim_cur < DDTSIM_MIN_AS) {
		// The Go runtime would die in its start with a fatal error of
		// its own ("failed to reserve page summary memory").
		fprintf(stderr, "ddtsim: the virtual memory limit (ulimit -v) is %llu KiB: too low to start; ddtsim's Go runtime reserves about 1 GiB of address space at start (little of it is used): raise the limit to at least %llu KiB (1.5 GiB), or lift it\n",
			(unsigned long long)rl.rlim_cur / 1024, (unsigned long long)DDTSIM_ADVISED_AS / 1024);
		_exit(1);
	}
#ifdef __GLIBC__
	// glibc gives each thread that allocates an arena of its own,
	// reserving 64 MiB of address space each; one arena for all.
	mallopt(M_ARENA_MAX, 1);
	// New threads get stacks of RLIMIT_STACK (8 MiB); 1 MiB is plenty for
	// the runtime's system stacks and the C code ddtsim calls (libzstd).
	pthread_attr_t a;
	if (pthread_getattr_default_np(&a) == 0) {
		size_t size;
		if (pthread_attr_getstacksize(&a, &size) == 0 && size > (1 << 20)) {
			pthread_attr_setstacksize(&a, 1 << 20);
			pthread_setattr_default_np(&a);
		}
		pthread_attr_destroy(&a);
	}
#endif
}
*/
import "C"

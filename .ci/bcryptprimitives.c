/*
 * bcryptprimitives.dll for Wine 8 (Debian 12), which lacks it: the Go
 * runtime (1.22+) on Windows loads ProcessPrng from it at start-up and
 * dies without it. Forwards to RtlGenRandom (advapi32 SystemFunction036),
 * which Wine has. For running the windows/amd64 tests under Wine only
 * (.ci/run); never shipped.
 */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buf, ULONG len);

__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len)
{
	while (len > 0) {
		ULONG n = len > 0x40000000 ? 0x40000000 : (ULONG)len;
		if (!SystemFunction036(data, n))
			return FALSE;
		data += n;
		len -= n;
	}
	return TRUE;
}

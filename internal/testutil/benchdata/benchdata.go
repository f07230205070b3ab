// Package benchdata writes a deterministic, synthetic data set for ddtsim's
// throughput benchmarks. It is meant to look, to a dedup and compression
// scan, like what administrators point ddtsim at:
//
//   - images/: about 50 % of the bytes, a few raw VM images laid out in
//     128 KiB records. The first image mixes incompressible (random) records,
//     compressible text-like records and runs of all-zero records; the others
//     are clones of it that share most of its records and replace the rest
//     with fresh content, so the dedup table sees refcnts from 2 to 8.
//   - logs/: about 20 %, log and prose text files (LZ4 ratio roughly 2–4×).
//   - bin/: about 20 %, binary-like files: random bytes ANDed with a mix of
//     masks, partially compressible.
//   - small/: about 10 %, many small files of 1 B to 64 KiB (text, binary,
//     random), some of them duplicates of others.
//
// The output depends only on the requested size: the same call always writes
// the same bytes. Zero records are written as data (the files are not
// sparse).
package benchdata

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// RecordSize is the record size (bytes) the VM images are laid out in: the
// ZFS default recordsize.
const RecordSize = 128 << 10

// Shares of the data set in percent; the small files get the rest.
const (
	imagePercent  = 50
	textPercent   = 20
	binaryPercent = 20
)

// maxImages is the number of VM images (the original and its clones) when
// the image share is large enough; it bounds the refcnt that clone sharing
// alone produces.
const maxImages = 8

// Streams separate the random sequences of the parts of the data set.
const (
	streamLayout uint64 = iota + 1
	streamImage
	streamClone
	streamText
	streamBinary
	streamSmallPick
	streamSmall
)

// seed is the root of every random sequence ("ddtsim" in ASCII).
const seed uint64 = 0x64647473696d

// Generate writes a data set of about total bytes (never more) into dir,
// creating dir if needed. Files already in dir with the same names are
// overwritten; other files are left alone.
func Generate(dir string, total int64) error {
	if total <= 0 {
		return fmt.Errorf("benchdata: size must be positive, got %d", total)
	}
	img := total * imagePercent / 100
	text := total * textPercent / 100
	bin := total * binaryPercent / 100
	small := total - img - text - bin
	parts := []struct {
		sub   string
		bytes int64
		write func(dir string, bytes int64) error
	}{
		{"images", img, writeImages},
		{"logs", text, writeTextFiles},
		{"bin", bin, writeBinaryFiles},
		{"small", small, writeSmallFiles},
	}
	for _, p := range parts {
		if p.bytes <= 0 {
			continue
		}
		d := filepath.Join(dir, p.sub)
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
		if err := p.write(d, p.bytes); err != nil {
			return fmt.Errorf("benchdata: %s: %w", p.sub, err)
		}
	}
	return nil
}

// rng is a PCG-DXSM generator (math/rand/v2) with small helpers; it is used
// by value, without an interface, so that filling buffers stays cheap.
type rng struct{ pcg rand.PCG }

// newRNG returns the generator of item index of stream.
func newRNG(stream, index uint64) *rng {
	r := &rng{}
	r.pcg.Seed(splitmix(seed^splitmix(stream)), splitmix(index^0x5851F42D4C957F2D))
	return r
}

// SplitMix is the splitmix64 finaliser, used to spread nearby seeds (and
// by the other generators of this directory).
func SplitMix(z uint64) uint64 { return splitmix(z) }

// splitmix is the splitmix64 finaliser, used to spread nearby seeds.
func splitmix(z uint64) uint64 {
	z += 0x9E3779B97F4A7C15
	z = (z ^ z>>30) * 0xBF58476D1CE4E5B9
	z = (z ^ z>>27) * 0x94D049BB133111EB
	return z ^ z>>31
}

func (r *rng) u64() uint64 { return r.pcg.Uint64() }

// intn returns a number in [0, n); the modulo bias is irrelevant here.
func (r *rng) intn(n int) int { return int(r.u64() % uint64(n)) }

// float returns a number in [0, 1).
func (r *rng) float() float64 { return float64(r.u64()>>11) / (1 << 53) }

// between returns a number in [lo, hi].
func (r *rng) between(lo, hi int64) int64 { return lo + int64(r.u64()%uint64(hi-lo+1)) }

// fill overwrites b with random bytes.
func (r *rng) fill(b []byte) {
	i := 0
	for ; i+8 <= len(b); i += 8 {
		binary.LittleEndian.PutUint64(b[i:], r.u64())
	}
	if i < len(b) {
		var t [8]byte
		binary.LittleEndian.PutUint64(t[:], r.u64())
		copy(b[i:], t[:])
	}
}

// Record kinds of the original VM image.
const (
	recZero = iota
	recRandom
	recText
)

// writeImages writes the VM images: image 0 is the original; every other
// image is a clone that, record by record, either shares the original's
// record or holds fresh content of the same kind. Each record of the
// original has a popularity (the chance a clone keeps it): most are
// "system" records almost every clone keeps, the others are kept by about
// half or a few of the clones.
func writeImages(dir string, bytes int64) error {
	recs := bytes / RecordSize
	if recs == 0 {
		return nil
	}
	n := min(int64(maxImages), recs)
	per := recs / n

	// Layout of the original: kind and popularity of each record.
	lr := newRNG(streamLayout, 0)
	kinds := make([]uint8, per)
	keep := make([]float64, per)
	for i := int64(0); i < per; {
		if lr.float() < 0.02 { // a run of zero records
			run := min(lr.between(2, 24), per-i)
			for ; run > 0; run-- {
				kinds[i], keep[i] = recZero, 1
				i++
			}
			continue
		}
		if lr.float() < 0.5 {
			kinds[i] = recRandom
		} else {
			kinds[i] = recText
		}
		switch u := lr.float(); {
		case u < 0.6:
			keep[i] = 0.95
		case u < 0.85:
			keep[i] = 0.5
		default:
			keep[i] = 0.15
		}
		i++
	}

	buf := make([]byte, RecordSize)
	for img := int64(0); img < n; img++ {
		f, err := os.Create(filepath.Join(dir, fmt.Sprintf("vm-%02d.raw", img)))
		if err != nil {
			return err
		}
		pick := newRNG(streamClone, uint64(img)<<32)
		for rec := int64(0); rec < per; rec++ {
			r := newRNG(streamImage, uint64(rec)) // the original's record
			if img > 0 && pick.float() >= keep[rec] {
				r = newRNG(streamClone, uint64(img)<<32|uint64(rec)+1)
			}
			switch kinds[rec] {
			case recZero:
				clear(buf)
			case recRandom:
				r.fill(buf)
			case recText:
				t := textGen{r: r, prose: r.intn(2) == 0}
				t.fill(buf)
			}
			if _, err := f.Write(buf); err != nil {
				f.Close()
				return err
			}
		}
		if err := f.Close(); err != nil {
			return err
		}
	}
	return nil
}

// writeStream writes files of random sizes in [lo, hi] bytes until bytes
// are written, each filled chunk by chunk by the generator that newFill
// returns for the file's index.
func writeStream(dir string, name func(i int) string, bytes, lo, hi int64, stream uint64, newFill func(r *rng, i int) func([]byte)) error {
	sizes := newRNG(stream, math.MaxUint64)
	buf := make([]byte, RecordSize)
	for i := 0; bytes > 0; i++ {
		size := min(sizes.between(lo, hi), bytes)
		bytes -= size
		fill := newFill(newRNG(stream, uint64(i)), i)
		f, err := os.Create(filepath.Join(dir, name(i)))
		if err != nil {
			return err
		}
		for left := size; left > 0; {
			b := buf[:min(left, int64(len(buf)))]
			fill(b)
			if _, err := f.Write(b); err != nil {
				f.Close()
				return err
			}
			left -= int64(len(b))
		}
		if err := f.Close(); err != nil {
			return err
		}
	}
	return nil
}

// writeTextFiles writes log files (three in four) and prose files of
// 256 KiB to 8 MiB.
func writeTextFiles(dir string, bytes int64) error {
	prose := func(i int) bool { return i%4 == 3 }
	name := func(i int) string {
		if prose(i) {
			return fmt.Sprintf("doc-%03d.txt", i)
		}
		return fmt.Sprintf("app-%03d.log", i)
	}
	return writeStream(dir, name, bytes, 256<<10, 8<<20, streamText, func(r *rng, i int) func([]byte) {
		t := &textGen{r: r, prose: prose(i)}
		return t.fill
	})
}

// writeBinaryFiles writes binary-like files of 512 KiB to 16 MiB.
func writeBinaryFiles(dir string, bytes int64) error {
	name := func(i int) string { return fmt.Sprintf("blob-%03d.bin", i) }
	return writeStream(dir, name, bytes, 512<<10, 16<<20, streamBinary, func(r *rng, _ int) func([]byte) {
		return func(b []byte) { fillBinary(r, b) }
	})
}

// smallMax is the largest small file, bytes.
const smallMax = 64 << 10

// smallPerDir is the number of small files per directory.
const smallPerDir = 256

// writeSmallFiles writes files of 1 B to 64 KiB (median about 2.5 KiB) in
// subdirectories of smallPerDir files. One file in ten repeats the content
// of an earlier one (a copied configuration file, a vendored library).
func writeSmallFiles(dir string, bytes int64) error {
	pick := newRNG(streamSmallPick, 0)
	buf := make([]byte, smallMax)
	for i := 0; bytes > 0; i++ {
		content := uint64(i)
		if i > 0 && pick.float() < 0.1 {
			content = uint64(pick.intn(i))
		}
		r := newRNG(streamSmall, content)
		// exp(√u·ln 64Ki): every size from 1 B up, median about 2.5 KiB.
		size := min(int64(math.Exp(math.Sqrt(r.float())*math.Log(smallMax+1))), smallMax, bytes)
		size = max(size, 1)
		bytes -= size
		b := buf[:size]
		var ext string
		switch k := r.intn(4); k {
		case 0, 1:
			t := textGen{r: r, prose: k == 1}
			t.fill(b)
			ext = "txt"
		case 2:
			fillBinary(r, b)
			ext = "bin"
		default:
			r.fill(b)
			ext = "dat"
		}
		sub := filepath.Join(dir, fmt.Sprintf("%03d", i/smallPerDir))
		if i%smallPerDir == 0 {
			if err := os.MkdirAll(sub, 0o755); err != nil {
				return err
			}
		}
		if err := os.WriteFile(filepath.Join(sub, fmt.Sprintf("f%05d.%s", i, ext)), b, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// fillBinary fills b like an executable or a database file: segments of 256
// bytes to 8 KiB, each random bytes ANDed with one mask pattern, from
// all-ones (machine code, compressed data: incompressible) through narrow
// masks (small integers, pointers with constant high bytes) to all-zero
// (padding).
func fillBinary(r *rng, b []byte) {
	for len(b) > 0 {
		seg := b[:min(256<<r.intn(6), len(b))]
		b = b[len(seg):]
		r.fill(seg)
		var mask uint64
		switch r.intn(10) {
		case 0, 1, 2:
			continue // random
		case 3, 4:
			mask = 0 // padding
		case 5:
			mask = 0x0F0F0F0F0F0F0F0F
		case 6:
			mask = 0x0303030303030303
		case 7:
			mask = 0x000003FF000003FF // 32-bit counters
		case 8:
			mask = 0x00000FFFFFFFFFF8 // aligned 64-bit pointers
		case 9:
			mask = 0x0000FF000000FF00
		}
		i := 0
		for ; i+8 <= len(seg); i += 8 {
			v := binary.LittleEndian.Uint64(seg[i:])
			binary.LittleEndian.PutUint64(seg[i:], v&mask)
		}
		for ; i < len(seg); i++ {
			seg[i] &= byte(mask >> (8 * (i % 8)))
		}
	}
}

// textGen produces text: syslog-style log lines or prose-like lines of
// words. The part of a line that did not fit in one fill is returned by the
// next, so a file written chunk by chunk is a sequence of whole lines.
type textGen struct {
	r     *rng
	prose bool
	clock int64  // log timestamp, Unix milliseconds
	pend  []byte // generated bytes not returned yet
	line  []byte // scratch
}

// fill overwrites b with text.
func (t *textGen) fill(b []byte) {
	n := copy(b, t.pend)
	t.pend = t.pend[n:]
	for n < len(b) {
		if t.prose {
			t.line = t.proseLine(t.line[:0])
		} else {
			t.line = t.logLine(t.line[:0])
		}
		c := copy(b[n:], t.line)
		n += c
		t.pend = append(t.pend[:0], t.line[c:]...)
	}
}

var (
	logHosts = []string{"web01", "web02", "db01", "cache03", "build-07", "nas"}
	logUsers = []string{"root", "alice", "bob", "deploy", "backup", "www-data", "postgres"}
	logUnits = []string{"logrotate.service", "apt-daily.service", "zfs-scrub@tank.service",
		"sysstat-collect.service", "certbot.service", "session-42.scope"}
	logPaths = []string{"/", "/index.html", "/api/v1/items", "/api/v1/users/me",
		"/static/app.js", "/static/style.css", "/favicon.ico", "/login", "/metrics"}
	logAgents = []string{"Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0",
		"curl/8.5.0", "Prometheus/2.51.0", "Go-http-client/1.1"}
	logMsgs = []string{"request done", "cache miss", "connection reset by peer",
		"slow query", "retrying", "session opened", "session closed"}
	logStatus = []int{200, 200, 200, 200, 304, 404, 500}
	words     = []string{"the", "of", "and", "a", "to", "in", "is", "that", "for", "it",
		"pool", "dataset", "record", "block", "checksum", "compression", "dedup", "table",
		"snapshot", "clone", "mirror", "raidz", "vdev", "scrub", "resilver", "ashift",
		"write", "read", "file", "system", "data", "metadata", "size", "sector", "disk",
		"kernel", "memory", "cache", "allocation", "property", "value", "default",
		"when", "with", "this", "are", "be", "can", "not", "on", "each", "one", "all"}
)

// logLine appends one log line: timestamp, host and one of a few message
// templates with varying numbers, addresses and ids.
func (t *textGen) logLine(b []byte) []byte {
	r := t.r
	if t.clock == 0 {
		t.clock = 1_700_000_000_000 + int64(r.intn(1<<30))
	}
	t.clock += int64(r.intn(1500))
	b = time.UnixMilli(t.clock).UTC().AppendFormat(b, "2006-01-02T15:04:05.000Z ")
	b = append(b, logHosts[r.intn(len(logHosts))]...)
	switch r.intn(6) {
	case 0:
		b = append(b, " sshd["...)
		b = strconv.AppendInt(b, int64(1000+r.intn(60000)), 10)
		b = append(b, "]: Accepted publickey for "...)
		b = append(b, logUsers[r.intn(len(logUsers))]...)
		b = append(b, " from "...)
		b = appendIP(b, r)
		b = append(b, " port "...)
		b = strconv.AppendInt(b, int64(1024+r.intn(64000)), 10)
		b = append(b, " ssh2"...)
	case 1, 2:
		b = append(b, " nginx: "...)
		b = appendIP(b, r)
		b = append(b, ` - - "GET `...)
		b = append(b, logPaths[r.intn(len(logPaths))]...)
		b = append(b, ` HTTP/1.1" `...)
		b = strconv.AppendInt(b, int64(logStatus[r.intn(len(logStatus))]), 10)
		b = append(b, ' ')
		b = strconv.AppendInt(b, int64(r.intn(100000)), 10)
		b = append(b, ` "-" "`...)
		b = append(b, logAgents[r.intn(len(logAgents))]...)
		b = append(b, '"')
	case 3:
		b = append(b, " systemd[1]: Started "...)
		b = append(b, logUnits[r.intn(len(logUnits))]...)
		b = append(b, '.')
	default:
		b = append(b, " app["...)
		b = strconv.AppendInt(b, int64(1000+r.intn(60000)), 10)
		b = append(b, `]: level=info msg="`...)
		b = append(b, logMsgs[r.intn(len(logMsgs))]...)
		b = append(b, `" req_id=`...)
		b = strconv.AppendUint(b, r.u64()&0xFFFFFFFFFF, 16)
		b = append(b, " duration_ms="...)
		b = strconv.AppendInt(b, int64(r.intn(5000)), 10)
		b = append(b, " user="...)
		b = append(b, logUsers[r.intn(len(logUsers))]...)
	}
	return append(b, '\n')
}

func appendIP(b []byte, r *rng) []byte {
	b = append(b, "10."...)
	b = strconv.AppendInt(b, int64(r.intn(4)), 10)
	b = append(b, '.')
	b = strconv.AppendInt(b, int64(r.intn(256)), 10)
	b = append(b, '.')
	return strconv.AppendInt(b, int64(1+r.intn(254)), 10)
}

// proseLine appends one line of 6 to 14 words.
func (t *textGen) proseLine(b []byte) []byte {
	r := t.r
	n := 6 + r.intn(9)
	for i := range n {
		if i > 0 {
			b = append(b, ' ')
		}
		b = append(b, words[r.intn(len(words))]...)
	}
	if r.intn(3) == 0 {
		b = append(b, '.')
	}
	return append(b, '\n')
}

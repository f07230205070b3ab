-- ddtsim: the dedup table histogram of saved scans, as zdb -S builds it
-- (OpenZFS cmd/zdb/zdb.c, dump_simulated_ddt), in portable SQL.
--
-- Reads:  ddtsim_entries(key, refcnt, lsize, psize, dsize), a table or view
--         of the rows of every scan: one row per DDT key per scan
--         (docs/saved-scans.md, section Many scans in SQL, shows how to
--         define it on each engine).
-- Yields: one row per non-empty bucket, ordered by bucket, all BIGINT:
--           bucket,
--           blocks, lsize, psize, dsize                  the allocated columns
--           ref_blocks, ref_lsize, ref_psize, ref_dsize  the referenced columns
--
-- ANSI SQL only (WITH, CASE, MOD, FLOOR, CAST, SUM, COUNT), so that DuckDB,
-- Spark SQL and Trino run the same text. One statement without a final
-- semicolon, ending in a line of SQL, so that it can be put inside COPY (...)
-- or another query. No quotes or semicolons in these comments either: some
-- command line clients split statements without reading comments.
--
-- Overflow: a referenced sum is at most the bytes the scans referenced
-- (ref_lsize is the logical bytes of the files scanned), and the product
-- refcnt * lsize of a row is part of it: far below 2^63 bytes (8 EiB) for
-- any real data. DuckDB and Trino stop with an error on an overflow, and so
-- does Spark with spark.sql.ansi.enabled (the default from Spark 4.0).
WITH per_key AS (
  -- The reduce: one row per DDT key, the references of all scans added up,
  -- as zdb adds every block pointer to the sums of its entry (zdb_ddt_add_cb,
  -- zdde_ref_blocks, zdde_ref_lsize and so on). A row holds refcnt
  -- references of equal sizes. psize = 0 is a block embedded in its block
  -- pointer, which zdb skips (BP_IS_EMBEDDED): no DDT entry.
  SELECT
    key,
    CAST(SUM(refcnt) AS BIGINT) AS ref_blocks,
    CAST(SUM(refcnt * lsize) AS BIGINT) AS ref_lsize,
    CAST(SUM(refcnt * psize) AS BIGINT) AS ref_psize,
    CAST(SUM(refcnt * dsize) AS BIGINT) AS ref_dsize
  FROM ddtsim_entries
  WHERE psize <> 0
  GROUP BY key
),
per_entry AS (
  -- One DDT entry as the loop of zdb over its tree makes it, with
  -- refcnt = ref_blocks.
  --
  -- bucket = floor(log2(refcnt)), highbit(refcnt) - 1 in zdb (ddt_stat_add
  -- into ddh_stat[highbit(refcnt) - 1]): the ladder over the powers of two.
  -- refcnt is a BIGINT, below 2^63, so 62 is the last bucket it can reach
  -- (the histogram of zdb has 64, 0 to 63).
  --
  -- The allocated sizes are ref_size / refcnt in integer division, as zdb
  -- computes them (dds_lsize = zdde_ref_lsize / refcnt and so on). The sizes
  -- of a key are equal in every scan: the quotient is the size of one
  -- reference. For a dividend a and a divisor b, a - MOD(a, b) is a multiple
  -- of b, with an integer quotient q, and x = (a - MOD(a, b)) / b is how the
  -- engine computes it. Trino divides two BIGINTs as integers: x = q (and
  -- x + 0.25 is an exact DECIMAL). DuckDB and Spark divide them as DOUBLEs:
  -- x = q while a <= 2^53 (every step is exact), and beyond that x is
  -- within 3/16 of q while q < 2^49. FLOOR(x + 0.25) is q in both cases: a
  -- DOUBLE that is an integer keeps its value when 0.25 is added and the sum
  -- rounded (0.5 would not: 2^52 + 1.5 rounds to 2^52 + 2), and one within
  -- 3/16 of q gives a sum between q and q + 1/2.
  -- A CAST alone would round on DuckDB and Trino but truncate on Spark. So
  -- the division is exact for every dividend up to 2^53, and for any BIGINT
  -- dividend whose quotient is below 2^49: the size of one reference is a
  -- few hundred MiB at most.
  SELECT
    CAST(CASE
      WHEN ref_blocks <                   2 THEN  0  -- 2^1
      WHEN ref_blocks <                   4 THEN  1  -- 2^2
      WHEN ref_blocks <                   8 THEN  2  -- 2^3
      WHEN ref_blocks <                  16 THEN  3  -- 2^4
      WHEN ref_blocks <                  32 THEN  4  -- 2^5
      WHEN ref_blocks <                  64 THEN  5  -- 2^6
      WHEN ref_blocks <                 128 THEN  6  -- 2^7
      WHEN ref_blocks <                 256 THEN  7  -- 2^8
      WHEN ref_blocks <                 512 THEN  8  -- 2^9
      WHEN ref_blocks <                1024 THEN  9  -- 2^10
      WHEN ref_blocks <                2048 THEN 10  -- 2^11
      WHEN ref_blocks <                4096 THEN 11  -- 2^12
      WHEN ref_blocks <                8192 THEN 12  -- 2^13
      WHEN ref_blocks <               16384 THEN 13  -- 2^14
      WHEN ref_blocks <               32768 THEN 14  -- 2^15
      WHEN ref_blocks <               65536 THEN 15  -- 2^16
      WHEN ref_blocks <              131072 THEN 16  -- 2^17
      WHEN ref_blocks <              262144 THEN 17  -- 2^18
      WHEN ref_blocks <              524288 THEN 18  -- 2^19
      WHEN ref_blocks <             1048576 THEN 19  -- 2^20
      WHEN ref_blocks <             2097152 THEN 20  -- 2^21
      WHEN ref_blocks <             4194304 THEN 21  -- 2^22
      WHEN ref_blocks <             8388608 THEN 22  -- 2^23
      WHEN ref_blocks <            16777216 THEN 23  -- 2^24
      WHEN ref_blocks <            33554432 THEN 24  -- 2^25
      WHEN ref_blocks <            67108864 THEN 25  -- 2^26
      WHEN ref_blocks <           134217728 THEN 26  -- 2^27
      WHEN ref_blocks <           268435456 THEN 27  -- 2^28
      WHEN ref_blocks <           536870912 THEN 28  -- 2^29
      WHEN ref_blocks <          1073741824 THEN 29  -- 2^30
      WHEN ref_blocks <          2147483648 THEN 30  -- 2^31
      WHEN ref_blocks <          4294967296 THEN 31  -- 2^32
      WHEN ref_blocks <          8589934592 THEN 32  -- 2^33
      WHEN ref_blocks <         17179869184 THEN 33  -- 2^34
      WHEN ref_blocks <         34359738368 THEN 34  -- 2^35
      WHEN ref_blocks <         68719476736 THEN 35  -- 2^36
      WHEN ref_blocks <        137438953472 THEN 36  -- 2^37
      WHEN ref_blocks <        274877906944 THEN 37  -- 2^38
      WHEN ref_blocks <        549755813888 THEN 38  -- 2^39
      WHEN ref_blocks <       1099511627776 THEN 39  -- 2^40
      WHEN ref_blocks <       2199023255552 THEN 40  -- 2^41
      WHEN ref_blocks <       4398046511104 THEN 41  -- 2^42
      WHEN ref_blocks <       8796093022208 THEN 42  -- 2^43
      WHEN ref_blocks <      17592186044416 THEN 43  -- 2^44
      WHEN ref_blocks <      35184372088832 THEN 44  -- 2^45
      WHEN ref_blocks <      70368744177664 THEN 45  -- 2^46
      WHEN ref_blocks <     140737488355328 THEN 46  -- 2^47
      WHEN ref_blocks <     281474976710656 THEN 47  -- 2^48
      WHEN ref_blocks <     562949953421312 THEN 48  -- 2^49
      WHEN ref_blocks <    1125899906842624 THEN 49  -- 2^50
      WHEN ref_blocks <    2251799813685248 THEN 50  -- 2^51
      WHEN ref_blocks <    4503599627370496 THEN 51  -- 2^52
      WHEN ref_blocks <    9007199254740992 THEN 52  -- 2^53
      WHEN ref_blocks <   18014398509481984 THEN 53  -- 2^54
      WHEN ref_blocks <   36028797018963968 THEN 54  -- 2^55
      WHEN ref_blocks <   72057594037927936 THEN 55  -- 2^56
      WHEN ref_blocks <  144115188075855872 THEN 56  -- 2^57
      WHEN ref_blocks <  288230376151711744 THEN 57  -- 2^58
      WHEN ref_blocks <  576460752303423488 THEN 58  -- 2^59
      WHEN ref_blocks < 1152921504606846976 THEN 59  -- 2^60
      WHEN ref_blocks < 2305843009213693952 THEN 60  -- 2^61
      WHEN ref_blocks < 4611686018427387904 THEN 61  -- 2^62
      ELSE 62
    END AS BIGINT) AS bucket,
    ref_blocks,
    ref_lsize,
    ref_psize,
    ref_dsize,
    CAST(FLOOR((ref_lsize - MOD(ref_lsize, ref_blocks)) / ref_blocks + 0.25) AS BIGINT) AS lsize,
    CAST(FLOOR((ref_psize - MOD(ref_psize, ref_blocks)) / ref_blocks + 0.25) AS BIGINT) AS psize,
    CAST(FLOOR((ref_dsize - MOD(ref_dsize, ref_blocks)) / ref_blocks + 0.25) AS BIGINT) AS dsize
  FROM per_key
)
SELECT
  bucket,
  CAST(COUNT(*) AS BIGINT) AS blocks,
  CAST(SUM(lsize) AS BIGINT) AS lsize,
  CAST(SUM(psize) AS BIGINT) AS psize,
  CAST(SUM(dsize) AS BIGINT) AS dsize,
  CAST(SUM(ref_blocks) AS BIGINT) AS ref_blocks,
  CAST(SUM(ref_lsize) AS BIGINT) AS ref_lsize,
  CAST(SUM(ref_psize) AS BIGINT) AS ref_psize,
  CAST(SUM(ref_dsize) AS BIGINT) AS ref_dsize
FROM per_entry
GROUP BY bucket
ORDER BY bucket

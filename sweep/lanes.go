package sweep

import (
	"fmt"
	"strings"

	"github.com/ddtsim/ddtsim/zfs/model"
	"github.com/ddtsim/ddtsim/zfs/zio"
)

// Lanes parses the settings of a sweep, given as text (model.Text) whose
// properties may give recordsize and compression as comma-separated lists
// ("recordsize=16K,128K,1M", "compression=off,lz4,zstd"), and returns what
// every lane shares and one policy per combination: for each recordsize,
// each compression, in the order given. Volumes (t.Zvol, or
// volblocksize given) are swept the same way over a list of volblocksizes
// ("volblocksize=8K,16K,64K"; without it the default volblocksize): the
// settings returned then have Zvol set, and each lane's RecordSize is its
// volblocksize (Options.Zvol). Errors name the property at fault, as
// model.Parse does, and refuse a value listed twice or two values that
// are the same setting ("zstd" and "zstd-3").
func Lanes(t model.Text) (model.Settings, []*zio.Policy, error) {
	var rs, vbs, comp, other []string
	for _, kv := range t.Properties {
		name, value, ok := strings.Cut(kv, "=")
		if !ok {
			return model.Settings{}, nil, fmt.Errorf("-o %s: expected NAME=VALUE", kv)
		}
		if err := model.CheckCase(name, value); err != nil {
			return model.Settings{}, nil, err
		}
		var err error
		switch name {
		case "recordsize", "recsize":
			if rs != nil {
				return model.Settings{}, nil, fmt.Errorf("-o %s: recordsize given twice (give one comma-separated list)", kv)
			}
			rs, err = splitList(name, value)
		case "compression", "compress":
			if comp != nil {
				return model.Settings{}, nil, fmt.Errorf("-o %s: compression given twice (give one comma-separated list)", kv)
			}
			comp, err = splitList(name, value)
		case "volblocksize", "volblock":
			if vbs != nil {
				return model.Settings{}, nil, fmt.Errorf("-o %s: volblocksize given twice (give one comma-separated list)", kv)
			}
			vbs, err = splitList(name, value)
		case "copies", "dedup":
			if strings.Contains(value, ",") && value != "edonr,verify" && !strings.HasSuffix(value, ",verify") {
				err = fmt.Errorf("-o %s: a sweep takes lists for recordsize and compression only; run one sweep per %s value", kv, name)
			}
			other = append(other, kv)
		default:
			other = append(other, kv)
		}
		if err != nil {
			return model.Settings{}, nil, err
		}
	}
	size := "recordsize"
	if vbs != nil || t.Zvol || t.VolBlockSize != "" {
		if rs != nil {
			return model.Settings{}, nil, fmt.Errorf("-o recordsize does not apply to volumes (--zvol, -o volblocksize): their block size is the volblocksize; sweep -o volblocksize=LIST")
		}
		if t.VolBlockSize != "" {
			if vbs != nil {
				return model.Settings{}, nil, fmt.Errorf("-o volblocksize and --volblocksize: give one list, -o volblocksize=LIST")
			}
			vbs = []string{t.VolBlockSize}
		}
		t.Zvol, t.VolBlockSize, size, rs = true, "", "volblocksize", vbs
	}
	if rs == nil {
		rs = []string{""}
	}
	if comp == nil {
		comp = []string{""}
	}
	t.Properties = other
	base, err := model.Parse(t)
	if err != nil {
		return model.Settings{}, nil, err
	}
	var lanes []*zio.Policy
	var pool zio.Vdev
	var given [][2]string // each lane's (recordsize, compression) as the user wrote them
	for _, r := range rs {
		for _, c := range comp {
			set := base
			if r != "" {
				if err := set.Set(size, r); err != nil {
					return model.Settings{}, nil, err
				}
			}
			if c != "" {
				if err := set.Set("compression", c); err != nil {
					return model.Settings{}, nil, err
				}
			}
			p, err := set.Policy()
			if err != nil {
				return model.Settings{}, nil, err
			}
			// One pool object for all lanes (sweep.Run checks they share it).
			if pool == nil {
				pool = p.Vdev
			}
			p.Vdev = pool
			for i, q := range lanes {
				if q.RecordSize == p.RecordSize && q.Compression == p.Compression && q.Level == p.Level {
					if given[i][1] != c {
						return model.Settings{}, nil, fmt.Errorf("-o compression=%s: the values %s and %s are the same compression (%s)", strings.Join(comp, ","),
							given[i][1], c, zio.CompressionName(p.Compression, p.Level))
					}
					return model.Settings{}, nil, fmt.Errorf("-o %s=%s: the values %s and %s are the same %s", size, strings.Join(rs, ","), given[i][0], r, size)
				}
			}
			lanes = append(lanes, p)
			given = append(given, [2]string{r, c})
		}
	}
	return base, lanes, nil
}

// splitList splits a comma-separated property list, refusing empty and
// repeated values.
func splitList(name, v string) ([]string, error) {
	var out []string
	seen := map[string]bool{}
	for _, x := range strings.Split(v, ",") {
		x = strings.TrimSpace(x)
		if x == "" {
			return nil, fmt.Errorf("-o %s=%s: empty value in the list", name, v)
		}
		if seen[strings.ToLower(x)] {
			return nil, fmt.Errorf("-o %s=%s: %s is listed twice", name, v, x)
		}
		seen[strings.ToLower(x)] = true
		out = append(out, x)
	}
	return out, nil
}

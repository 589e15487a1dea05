# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# Self cost per object and per function of one callgrind dump (POSIX awk),
# for run-endpoints.sh and run-rdm.sh:
#   total COST
#   ob COST OBJECT
#   fn COST OBJECT<TAB>FUNCTION
# Callgrind compresses names: "(id) name" the first time, "(id)" after.
# Calls lines (calls=, then the inclusive cost line) are skipped: self
# cost only.

function name(s, map,    id, rest) {
	if (match(s, /^\([0-9]+\)/)) {
		id = substr(s, 1, RLENGTH)
		rest = substr(s, RLENGTH + 2)
		if (rest != "")
			map[id] = rest
		return map[id]
	}
	return s
}
/^ob=/ { ob = name(substr($0, 4), obs); next }
/^cob=/ { name(substr($0, 5), obs); next }
/^fn=/ { fn = name(substr($0, 4), fns); next }
/^cfn=/ { name(substr($0, 5), fns); next }
/^calls=/ { skip = 1; next }
/^[0-9+*-]/ {
	if (skip) { skip = 0; next }
	self_ob[ob] += $2
	self_fn[ob "\t" fn] += $2
	total += $2
}
END {
	printf "total %d\n", total
	for (o in self_ob) printf "ob %d %s\n", self_ob[o], o
	for (f in self_fn) printf "fn %d %s\n", self_fn[f], f
}

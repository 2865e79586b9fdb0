# json.awk - the shell agent's JSON, in busybox awk (docs/agents.md).
#
#   awk -f json.awk [-v mode=flat] < DOC   one line per scalar of one JSON
#                                          document: PATH<TAB>VALUE, PATH
#                                          the keys and indexes joined by
#                                          '.', VALUE a string's content
#                                          still JSON-escaped (so that it
#                                          fits one line) or a literal
#   awk -v mode=unesc -f json.awk          stdin, JSON-unescaped
#   awk -v mode=esc -f json.awk            stdin as the content of a JSON
#                                          string, cut to max bytes (8000)
#
# Bounded: a malformed document ends the walk (no loop without progress),
# nesting deeper than 32 is refused.
function ws() {
	while (pos <= n && index(" \t\r\n", substr(doc, pos, 1)) > 0)
		pos++
}
function str(   start, c) {
	pos++
	start = pos
	while (pos <= n) {
		c = substr(doc, pos, 1)
		if (c == "\\")
			pos += 2
		else if (c == "\"")
			break
		else
			pos++
	}
	s = substr(doc, start, pos - start)
	pos++
	return s
}
function lit(path,   start) {
	start = pos
	while (pos <= n && index(",}] \t\r\n", substr(doc, pos, 1)) == 0)
		pos++
	if (pos == start) {
		bad = 1
		pos = n + 1
		return
	}
	print path "\t" substr(doc, start, pos - start)
}
function value(path, depth,   c) {
	ws()
	if (pos > n || depth > 32) {
		bad = 1
		pos = n + 1
		return
	}
	c = substr(doc, pos, 1)
	if (c == "{")
		obj(path, depth + 1)
	else if (c == "[")
		arr(path, depth + 1)
	else if (c == "\"")
		print path "\t" str()
	else
		lit(path)
}
function sep(closer,   c) {
	ws()
	c = substr(doc, pos, 1)
	pos++
	if (c == closer)
		return 0
	if (c != ",") {
		bad = 1
		pos = n + 1
		return 0
	}
	return 1
}
function obj(path, depth,   k) {
	pos++
	ws()
	if (substr(doc, pos, 1) == "}") {
		pos++
		return
	}
	do {
		ws()
		if (substr(doc, pos, 1) != "\"") {
			bad = 1
			pos = n + 1
			return
		}
		k = str()
		ws()
		pos++                   # the ':'
		value(path == "" ? k : path "." k, depth)
	} while (pos <= n && sep("}"))
}
function arr(path, depth,   i) {
	pos++
	ws()
	if (substr(doc, pos, 1) == "]") {
		pos++
		return
	}
	i = 0
	do {
		value(path == "" ? i : path "." i, depth)
		i++
	} while (pos <= n && sep("]"))
}
function hexval(h,   i, v) {
	v = 0
	for (i = 1; i <= 4; i++)
		v = v * 16 + index("0123456789abcdef", tolower(substr(h, i, 1))) - 1
	return v
}
function unesc(s,   out, i, c, d, v) {
	out = ""
	for (i = 1; i <= length(s); i++) {
		c = substr(s, i, 1)
		if (c != "\\") {
			out = out c
			continue
		}
		d = substr(s, ++i, 1)
		if (d == "n")
			out = out "\n"
		else if (d == "t")
			out = out "\t"
		else if (d == "r")
			out = out "\r"
		else if (d == "b" || d == "f")
			out = out " "
		else if (d == "u") {
			v = hexval(substr(s, i + 1, 4))
			i += 4
			out = out ((v >= 32 && v < 127) ? sprintf("%c", v) : "?")
		} else
			out = out d
	}
	return out
}
function esc(s,   out, i, c) {
	out = ""
	for (i = 1; i <= length(s); i++) {
		c = substr(s, i, 1)
		if (c == "\\")
			out = out "\\\\"
		else if (c == "\"")
			out = out "\\\""
		else if (c == "\n")
			out = out "\\n"
		else if (c == "\t")
			out = out "\\t"
		else if (c == "\r")
			out = out "\\r"
		else if (c < " ")
			out = out " "
		else
			out = out c
	}
	return out
}
{
	doc = NR == 1 ? $0 : doc "\n" $0
}
END {
	if (mode == "esc") {
		if (max == "")
			max = 8000
		printf "%s", esc(substr(doc, 1, max))
		exit 0
	}
	if (mode == "unesc") {
		printf "%s", unesc(doc)
		exit 0
	}
	n = length(doc)
	pos = 1
	bad = 0
	value("", 0)
	exit bad
}

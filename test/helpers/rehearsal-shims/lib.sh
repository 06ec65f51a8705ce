# Shared by the rehearsal's stand-ins of the build's network tools (uv, apt-get, curl, gpg, python, the
# EFA installer): each call is appended to /opt/rehearsal/calls.log as one JSON line (the tool, its
# arguments, its folder, whether uv's BuildKit cache is mounted, the variables the steps rely on), so the
# test reads back what every step ran, in order. `fail` stops the step as the real tool would.
REHEARSAL_LOG=/opt/rehearsal/calls.log

rehearsal_json() {
  printf '"'
  printf '%s' "$1" | awk 'BEGIN { ORS = "" } { gsub(/\\/, "\\\\"); gsub(/"/, "\\\""); gsub(/\t/, "\\t"); if (NR > 1) print "\\n"; print }'
  printf '"'
}

record() {
  tool=$1
  shift
  cache=false
  if grep -q ' /root/.cache/uv ' /proc/mounts 2>/dev/null; then cache=true; fi
  {
    printf '{"tool":%s,"cwd":%s,"cacheMount":%s,"env":{' "$(rehearsal_json "$tool")" "$(rehearsal_json "$(pwd)")" "$cache"
    sep=""
    for name in DEBIAN_FRONTEND UV_LINK_MODE UV_COMPILE_BYTECODE UV_PYTHON_INSTALL_DIR VIRTUAL_ENV NLTK_DATA HF_HOME HF_ALLOW_CODE_EVAL GNUPGHOME; do
      eval "isset=\${$name+x}"
      if [ -n "$isset" ]; then
        eval "value=\$$name"
        printf '%s%s:%s' "$sep" "$(rehearsal_json "$name")" "$(rehearsal_json "$value")"
        sep=","
      fi
    done
    printf '},"args":['
    sep=""
    for a in "$@"; do
      printf '%s%s' "$sep" "$(rehearsal_json "$a")"
      sep=","
    done
    printf ']}\n'
  } >>"$REHEARSAL_LOG"
}

fail() {
  echo "$1" >&2
  exit "${2:-1}"
}

# `name==version` (or `name`) per requirement of a requirements file: names normalised as pip does,
# extras, markers, comments and option lines dropped.
requirements_of() {
  sed -e 's/#.*//' -e 's/;.*//' -e 's/[[:space:]]//g' -e 's/\[[^]]*\]//' "$1" | grep -v '^-' | grep -v '^$' |
    awk '{
      line = tolower($0); name = line; sub(/[=<>!~].*/, "", name); gsub(/[_.]/, "-", name)
      version = ""; at = index(line, "=="); if (at) version = substr(line, at + 2)
      print name (version != "" ? "==" version : "")
    }'
}

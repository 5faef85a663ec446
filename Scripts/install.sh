#!/usr/bin/env bash
# Installs dsh for the current user, as Swift command-line tools ship: the release binary in
# PREFIX/bin, completions for bash, zsh and fish (from swift-argument-parser), the manual page
# (its generate-manual plugin) in PREFIX/share/man/man1, and the sample data the help's examples
# use (samples:NAME) in PREFIX/share/dsh/samples. PREFIX is ~/.local unless given:
#   Scripts/install.sh            # ~/.local/bin/dsh, man dsh
#   Scripts/install.sh /opt/dsh
# DSH_CONFIGURATION=debug installs the debug build instead (Scripts/test.sh checks the install
# with the build its tests use, so nothing is compiled twice).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
prefix="${1:-$HOME/.local}"
configuration="${DSH_CONFIGURATION:-release}"
source "$root/Scripts/setup.sh"
binary="$root/.build/$configuration/dsh"
if [ ! -x "$binary" ] || [ -n "$(find "$root/Sources" "$root/Package.swift" -newer "$binary" -print -quit)" ]; then
  swift build --package-path "$root" -c "$configuration" --product dsh >&2
fi
manual="$root/.build/plugins/GenerateManual/outputs/dsh/dsh.1"
if [ ! -f "$manual" ] || [ "$binary" -nt "$manual" ]; then
  swift package --package-path "$root" plugin generate-manual --configuration "$configuration" >&2
fi

install -d "$prefix/bin" "$prefix/share/man/man1" "$prefix/share/bash-completion/completions" \
  "$prefix/share/zsh/site-functions" "$prefix/share/fish/vendor_completions.d"
install -m 755 "$binary" "$prefix/bin/dsh"
"$binary" --generate-completion-script bash > "$prefix/share/bash-completion/completions/dsh"
"$binary" --generate-completion-script zsh > "$prefix/share/zsh/site-functions/_dsh"
"$binary" --generate-completion-script fish > "$prefix/share/fish/vendor_completions.d/dsh.fish"
# The generator lists a `help` subcommand every command has in swift-argument-parser; dsh has no
# subcommands (help is a statement), so the synopsis and the list leave it out.
# The generator writes no ENVIRONMENT section: the variables dsh reads go in before the authors
# (or at the end).
environment_section='.Sh ENVIRONMENT
.Bl -tag -width Ds
.It Ev DSH_HISTORY
The file the prompt keeps its history in; else
.Pa $XDG_STATE_HOME/dsh/history ,
.Pa ~/.local/state/dsh/history
when that folder exists, else
.Pa ~/.dsh_history .
.It Ev DSH_SAMPLES
The folder
.Ql samples:NAME
reads from; else the samples installed beside dsh.
.It Ev NO_COLOR
When set and not empty, no colour.
.It Ev TERM
.Ql dumb
turns off colour, the progress line, line editing and browse.
.It Ev PGHOST , Ev PGPORT , Ev PGDATABASE , Ev PGUSER , Ev PGPASSWORD , Ev PGSERVICE , Ev PGSSLMODE
Read by libpq for
.Ql postgres
sources, as psql reads them.
.El'
sed -e '/^\.Ar subcommand$/d' -e '/^\.It Em help$/,/^\.El$/d' "$manual" \
  | awk -v section="$environment_section" '
      /^\.Sh (AUTHORS|SEE ALSO)/ && !done { print section; done = 1 }
      { print }
      END { if (!done) print section }' > "$prefix/share/man/man1/dsh.1"
chmod 644 "$prefix/share/man/man1/dsh.1"
# The sample data the help's examples name as samples:NAME.
install -d "$prefix/share/dsh/samples"
install -m 644 "$root"/Scripts/data/* "$prefix/share/dsh/samples/"

echo "installed dsh $("$prefix/bin/dsh" --version) in $prefix/bin, its manual (man dsh) and completions"
case ":$PATH:" in
  *":$prefix/bin:"*) ;;
  *) echo "add $prefix/bin to PATH to run it as dsh" ;;
esac

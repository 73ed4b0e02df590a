# Prints what zsh's completion offers for a command line, one match a line, sorted: an
# interactive zsh in a pseudo-terminal (zpty) with FPATH_DIR first on fpath and compinit run,
# given LINE and a TAB; compadd is wrapped to print each match it adds. LINE is typed only once
# zle reads the terminal (its zle-line-init hook prints `<zle>`): typed earlier, it lands in the
# terminal's cooked line buffer, where the Ctrl-U sent after it erases it before zsh reads it.
# The markers are written as `<re''ady>`, `<zl""e>`, `<do''ne>`, so that the pty's echo of the
# typed commands is not taken for them; only their output is.
#   zsh -f tests/install/zsh_complete.zsh FPATH_DIR LINE
zmodload zsh/zpty
zpty shell zsh -f -i
zpty -w shell "PS1=''; fpath=(${(q)1} \$fpath); autoload -Uz compinit; compinit -u -D"
zpty -w shell 'compadd () { local -a m; builtin compadd -O m "$@"; (( $#m )) && print -r -l -- "<m>"${^m}; builtin compadd "$@" }'
zpty -w shell 'zle-line-init () { print -rn -- "<zl""e>" }; zle -N zle-line-init'
zpty -w shell "print '<re''ady>'"
zpty -r shell line '*<ready>*'
zpty -r shell line '*<zle>*'
zpty -w -n shell "$2"$'\t'
zpty -w shell $'\C-u'"print '<do''ne>'"
out=''
while zpty -r shell line; do
  out+=$line
  [[ $line == *'<done>'* ]] && break
done
zpty -d shell
print -r -- "${out//$'\r'/}" | grep -o '<m>[^<]*' | sed 's/^<m>//' | LC_ALL=C sort -u

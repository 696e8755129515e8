# bash completion for kasm-session-runtime(1).
# Options are listed here by hand; tests/integration/test_manpage.py checks
# that every option a command's --help prints is offered here too.

_kasm_session_runtime()
{
	local cur prev words cword
	_init_completion || return

	local commands="run validate watch inspect record mcp version"
	local cmd="" i
	for ((i = 1; i < cword; i++)); do
		case ${words[i]} in
		-*) ;;
		*)
			cmd=${words[i]}
			break
			;;
		esac
	done

	if [[ -z $cmd ]]; then
		COMPREPLY=($(compgen -W "$commands --help --version" -- "$cur"))
		return
	fi

	case $prev in
	--out | --evidence | --http | --token)
		[[ $prev == --out || $prev == --evidence ]] && _filedir -d
		return
		;;
	--junit)
		_filedir xml
		return
		;;
	--html)
		_filedir html
		return
		;;
	-o | --output)
		_filedir '@(yaml|yml)'
		return
		;;
	--watch-dir)
		_filedir -d
		return
		;;
	--stop-key | --name)
		return
		;;
	--format)
		COMPREPLY=($(compgen -W "text json github" -- "$cur"))
		return
		;;
	--tool-names)
		COMPREPLY=($(compgen -W "underscore dots" -- "$cur"))
		return
		;;
	--display-server)
		COMPREPLY=($(compgen -W "xvfb xvnc auto" -- "$cur"))
		return
		;;
	--wm)
		COMPREPLY=($(compgen -W "openbox xfwm4 auto" -- "$cur"))
		return
		;;
	--deadline | --video-fps | --timeout | --waiting-heartbeat | --cdp | --max-nodes | --launch | \
		--wait-window | --window | --settle-s)
		return
		;;
	esac

	local opts=""
	case $cmd in
	run) opts="--xvfb --display-server --wm --private-home --out --deadline --json --update-baseline --junit --video --video-fps --help" ;;
	validate) opts="--json --format --help" ;;
	watch) opts="-r --recursive --timeout --waiting-heartbeat --json --junit --html --help" ;;
	inspect) opts="--xvfb --display-server --wm --launch --wait-window --window --cdp --max-nodes --timeout --after --line --settle-s --out --json --help" ;;
	record) opts="--xvfb --launch -o --output --stop-key --watch-dir --name --timeout --help" ;;
	mcp) opts="--http --token --tool-names --xvfb --display-server --wm --evidence --help" ;;
	version) opts="--help" ;;
	esac

	if [[ $cur == -* ]]; then
		COMPREPLY=($(compgen -W "$opts" -- "$cur"))
		return
	fi
	case $cmd in
	run | validate) _filedir '@(yaml|yml)' ;;
	watch) _filedir -d ;;
	esac
} &&
	complete -F _kasm_session_runtime kasm-session-runtime

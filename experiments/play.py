"""Play a game in the terminal against bots, or watch bots play.

    python -m experiments.play --game neu --players 4 --human 0
    python -m experiments.play --game neu --human none          # watch a whole game
    python -m experiments.play --game deadfall --human 0,2 --bots random

A human sees only their own seat's view (``Engine.view``): their hand and the
public table, never another hand. Type a move by its number in the list or by
its name ("play 50", "shot player_2"); "help" says what can be typed, "rules"
prints the game's rules ("rules full" the reference, docs/RULES.md's section),
anything else gets a message and the question again.
Ctrl-D, Ctrl-C or "quit" leaves with one line.

Who is asked to decide can itself be a secret: in Not Your Ma's Jong only the
players asked about a discard may steal it, so steal decisions are never
printed by seat, and ``--delay`` does not pause on them.
"""

from __future__ import annotations

import re
import sys
import time
from pathlib import Path
from typing import Callable

import numpy as np

import envs
from experiments import cli
from experiments.cli import ArgumentParser
from agents import AGENT_KINDS, is_upper_bound, make_agent
from agents.spec import SPEC_LIST
from envs.belief import informed

# After every open move of a game with secret decisions (a discard in Not Your Ma's Jong), the
# secret ones may follow: said every time, so that the note itself tells nothing.
STEAL_NOTE = "  the others may steal it; their decisions are secret"
RULES = Path(__file__).resolve().parents[1] / "docs" / "RULES.md"
PROMPT = "{agent} (move number or name; help, rules, quit)> "
HELP = ("Type a move's number from the list, or its name (such as {example!r}).\n"
        "  help        this text\n  rules       the rules of {game}\n"
        "  rules full  the reference: the rules with every decision the original ones left open\n"
        "  quit        leave the game (also Ctrl-D or Ctrl-C)")


def rules_text(game: str) -> str:
    """The game's section of docs/RULES.md (in a checkout), else its env page: what the terminal's
    ``rules full`` command prints and the web page's rules dialog offers below `rules_for_players`."""
    if RULES.is_file():
        for section in re.split(r"\n(?=## )", RULES.read_text(encoding="utf-8")):
            if section.startswith("## ") and f"`{game}`" in section.splitlines()[0]:
                return section.strip().rstrip("-").strip()
    return (envs.module(game).__doc__ or "").strip()


# What a player does not need from docs/RULES.md: its decision markers and its notes on what the
# original write-ups said. The section itself stays the reference (`rules full`, and the dialog's fold).
_SOURCE_NOTES = [
    (re.compile(r"\s*\*\*\[D\]\*\*"), ""),  # a decision marker
    (re.compile(r"\s*\([^()]*\b(?:the original|the published)\b[^()]*\)"), ""),  # (the original says ...)
    (re.compile(r"The published [^;]*not found;\s*cardzoo names them"), "Their cards are"),
    (re.compile(r"\bSeed examples\b"), "Examples"),
]


def rules_for_players(game: str) -> str:
    """`rules_text` as a player reads it: the same rules, without the reference's decision markers
    and notes on sources."""
    text = rules_text(game)
    for pattern, replacement in _SOURCE_NOTES:
        text = pattern.sub(replacement, text)
    return text


def parse_humans(text: str, num_players: int) -> set[int]:
    if text.strip().lower() == "none":
        return set()
    seats = set()
    for part in text.split(","):
        part = part.strip()
        if not part.isdigit() or not 0 <= int(part) < num_players:
            raise ValueError(f"--human takes seat numbers 0..{num_players - 1} separated by commas, or 'none'; got {text!r}")
        seats.add(int(part))
    return seats


def ask(env, agent: str, legal: list[int], read: Callable[[str], str], write: Callable[[str], None]) -> int | None:
    u = env.unwrapped
    names = [u.action_name(a) for a in legal]
    write(u.game.view(u.seat_of(agent)))
    write("Your moves: " + "  ".join(f"[{i}] {name}" for i, name in enumerate(names)))
    while True:
        try:
            answer = read(PROMPT.format(agent=agent)).strip()
        except EOFError:
            write("")  # end the prompt's line
            return None
        if answer.lower() in ("quit", "exit", "q"):
            return None
        if answer.lower() in ("help", "?", "h"):
            write(HELP.format(example=names[0], game=u.game.game_name))
            write("Your moves: " + "  ".join(f"[{i}] {name}" for i, name in enumerate(names)))
            continue
        if answer.lower() in ("rules", "rules full"):
            write((rules_text if answer.lower() == "rules full" else rules_for_players)(u.game.game_name))
            write("Your moves: " + "  ".join(f"[{i}] {name}" for i, name in enumerate(names)))
            continue
        # isdecimal() is also true for digits of other scripts that int() rejects with
        # a limit on length; a move number is short and ASCII.
        if answer.isascii() and answer.isdigit() and len(answer) <= 6 and int(answer) < len(legal):
            return legal[int(answer)]
        lowered = [n.lower() for n in names]
        if answer.lower() in lowered:
            return legal[lowered.index(answer.lower())]
        shown = answer if len(answer) <= 40 else answer[:40] + "..."
        write(f"{shown!r} is not one of your moves; type a number 0-{len(legal) - 1} or a name such as {names[0]!r} (help: what you can type).")


def play(game: str, players: int, humans: set[int], bots: str, seed: int, delay: float = 0.0,
         read: Callable[[str], str] = input, write: Callable[[str], None] = print) -> dict | None:
    env = envs.make(game, num_players=players)
    env.reset(seed=seed)
    u = env.unwrapped
    bot_agents = {
        a: make_agent(bots, game, players, seed=seed * 100 + i)
        for i, a in enumerate(env.possible_agents)
        if i not in humans
    }
    write(f"{game} with {players} players; humans: {sorted(humans) or 'none'}; bots: {bots}")
    final = None
    for agent in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        if term or trunc:
            env.step(None)
            continue
        legal = [int(a) for a in np.flatnonzero(obs["action_mask"])]
        if u.seat_of(agent) in humans:
            action = ask(env, agent, legal, read, write)
            if action is None:
                write("Left the game.")
                return None
        else:
            bot = bot_agents[agent]  # a search agent is told its seat's information state first
            action = informed(bot, u.game, u.seat_of(agent), upper_bound=is_upper_bound(bot))(obs)
            if not humans:
                write(u.game.render())
        seat = u.seat_of(agent)
        # Humans at the table see other seats' moves as the table sees them.
        shown = u.action_name(action) if seat in humans or not humans else u.game.public_action_name(action, seat)
        # Also a human's own decision: with several humans at one terminal, the others read it too.
        # The engine's secret actions (a steal decision) would tell who was asked: never printed.
        secret = bool(humans) and action in u.game.secret_actions
        if not secret:
            write(f"{agent}: {shown}")
        if humans and u.game.secret_actions and action not in u.game.secret_actions:
            write(STEAL_NOTE)
        env.step(action)
        event = u.last_event
        if event is not None and "score_changes" in event:
            changes = {k: v for k, v in event["score_changes"].items() if v}
            write(f"  scores change: {changes or 'none'}; now {event['scores']}")
            if "final_ranks" in event:
                final = event
        if delay and not secret:
            time.sleep(delay)
    if final:
        ranking = sorted(final["final_ranks"], key=final["final_ranks"].get)
        write("Game over. Ranking: " + ", ".join(f"{a} ({final['final_scores'][a]})" for a in ranking))
    return final


def main(argv: list[str] | None = None) -> int:
    parser = ArgumentParser(prog="python -m experiments.play", description="Play cardzoo games in the terminal.")
    parser.add_argument("--game", required=True, help=f"one of: {', '.join(envs.available_games())}")
    parser.add_argument("--players", type=cli.count, default=None, help="number of players (default: the game's default)")
    parser.add_argument("--human", default="0", help="seat(s) played by a human, e.g. 0 or 0,2, or 'none' to watch")
    parser.add_argument("--bots", default="heuristic", help=f"agent for the other seats: {SPEC_LIST}")
    parser.add_argument("--seed", type=cli.seed, default=0, help="seed of the deal and the bots")
    parser.add_argument("--delay", type=cli.seconds, default=0.0, help="seconds to pause after each move")
    args = parser.parse_args(argv)
    if args.game not in envs.available_games():
        parser.error(f"unknown game {args.game!r}; valid games: {', '.join(envs.available_games())}")
    engine = envs.module(args.game).raw_env.engine_cls
    players = engine.default_players if args.players is None else args.players
    if not engine.min_players <= players <= engine.max_players:
        parser.error(f"{args.game} takes {engine.min_players} to {engine.max_players} players, got {players}")
    try:
        humans = parse_humans(args.human, players)
    except ValueError as e:
        parser.error(str(e))
    try:
        make_agent(args.bots, args.game, players)
    except Exception as e:
        if args.bots not in AGENT_KINDS:
            parser.error(str(e).splitlines()[0] if str(e) else type(e).__name__)
        print(f"note: {e}; the bots play at random instead")
        args.bots = "random"
    try:
        play(args.game, players, humans, args.bots, args.seed, args.delay)
    except KeyboardInterrupt:
        print("\nLeft the game.")
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())

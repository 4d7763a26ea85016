#!/usr/bin/env bash
# Renders the reference clips in workloads/clips/: real speech from espeak-ng voices, converted with sox
# to mono 16-bit FLAC at several sample rates and lengths (3-12 s). Deterministic for a given
# espeak-ng/sox version. Usage: scripts/make_clips.sh [OUT_DIR]   (default: workloads/clips)
set -euo pipefail
out="${1:-$(dirname "$0")/../workloads/clips}"
mkdir -p "$out"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

# name | voice | speed (wpm) | rate (Hz) | target seconds | text
clips=(
  "en-m-16k|en-us|165|16000|4|The quick brown fox jumps over the lazy dog while the farmer watches from the gate."
  "en-f-22k|en-us+f3|160|22050|6|Please call Stella and ask her to bring these things with her from the store: six spoons of fresh snow peas."
  "en-m-44k|en-gb|150|44100|9|A rainbow is a division of white light into many beautiful colours. These take the shape of a long round arch, with its path high above, and its two ends apparently beyond the horizon."
  "en-f-48k|en-gb+f2|155|48000|12|When the sunlight strikes raindrops in the air, they act as a prism and form a rainbow. There is, according to legend, a boiling pot of gold at one end. People look, but no one ever finds it. When a man looks for something beyond his reach, his friends say he is looking for the pot of gold."
  "de-m-24k|de|150|24000|5|Der Nordwind und die Sonne stritten sich, wer von ihnen beiden wohl der Stärkere wäre."
  "fr-f-44k|fr+f4|150|44100|7|La bise et le soleil se disputaient, chacun assurant qu'il était le plus fort, quand ils ont vu un voyageur qui s'avançait."
  "es-m-48k|es|155|48000|3|El viento norte y el sol discutían sobre cuál de ellos era el más fuerte."
  "en-m-22k|en-us+m3|170|22050|10|Some have accepted it as a miracle without physical explanation. To the Hebrews it was a token that there would be no more universal floods. The Greeks used to imagine that it was a sign from the gods."
)
for spec in "${clips[@]}"; do
  IFS='|' read -r name voice speed rate secs text <<<"$spec"
  espeak-ng -v "$voice" -s "$speed" -w "$tmp/$name.wav" "$text"
  # Trim or pad with silence to the target length, then resample and store as 16-bit FLAC.
  sox -V1 "$tmp/$name.wav" -r "$rate" -c 1 -b 16 "$out/$name.flac" norm -1 pad 0 "$secs" trim 0 "$secs"
done
ls -l "$out"

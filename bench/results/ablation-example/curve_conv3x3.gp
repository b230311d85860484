# Written by kmcts report; edit and run `gnuplot curve_conv3x3.gp` in this folder to redraw.
set terminal pngcairo size 1100,680 font "DejaVu Sans,13" noenhanced
set output "curve_conv3x3.png"
set title "Best speedup so far: conv3x3"
set xlabel "evaluations"
set ylabel "best speedup over the reference (x)"
set grid lc rgb "#dddddd"
set border 3
set tics nomirror
set key outside right top
set style fill transparent solid 0.15 noborder
set xrange [1:*]
plot "data/curve_conv3x3.dat" index 0 using 1:3:4 with filledcurves fc rgb "#0072B2" notitle, \
  "" index 0 using 1:2 with lines lw 2.5 dt 1 lc rgb "#0072B2" title "policy=uct", \
  "" index 1 using 1:3:4 with filledcurves fc rgb "#D55E00" notitle, \
  "" index 1 using 1:2 with lines lw 2.5 dt 1 lc rgb "#D55E00" title "policy=puct", \
  "" index 2 using 1:3:4 with filledcurves fc rgb "#009E73" notitle, \
  "" index 2 using 1:2 with lines lw 2.5 dt 1 lc rgb "#009E73" title "policy=thompson", \
  "" index 3 using 1:3:4 with filledcurves fc rgb "#CC79A7" notitle, \
  "" index 3 using 1:2 with lines lw 2.5 dt 1 lc rgb "#CC79A7" title "policy=egreedy", \
  "" index 4 using 1:3:4 with filledcurves fc rgb "#E69F00" notitle, \
  "" index 4 using 1:2 with lines lw 2.5 dt 1 lc rgb "#E69F00" title "policy=egreedy_tree", \
  "" index 5 using 1:3:4 with filledcurves fc rgb "#56B4E9" notitle, \
  "" index 5 using 1:2 with lines lw 2.5 dt 1 lc rgb "#56B4E9" title "policy=beam", \
  "" index 6 using 1:3:4 with filledcurves fc rgb "#000000" notitle, \
  "" index 6 using 1:2 with lines lw 2.5 dt 1 lc rgb "#000000" title "policy=linear", \
  "" index 7 using 1:3:4 with filledcurves fc rgb "#F0E442" notitle, \
  "" index 7 using 1:2 with lines lw 2.5 dt 1 lc rgb "#F0E442" title "policy=random"
set terminal svg size 1100,680 dynamic font "DejaVu Sans,13" noenhanced
set output "curve_conv3x3.svg"
replot
unset output

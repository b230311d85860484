# Written by kmcts report; edit and run `gnuplot cost_gpu_all.gp` in this folder to redraw.
set terminal pngcairo size 1100,680 font "DejaVu Sans,13" noenhanced
set output "cost_gpu_all.png"
set title "Cost and result: all problems (geometric mean)"
set xlabel "CPU time (s) (mean over problems per seed)"
set ylabel "final best speedup over the reference (x)"
set grid lc rgb "#dddddd"
set border 3
set tics nomirror
set key outside right top
set offsets graph 0.04, graph 0.04, graph 0.06, graph 0.06
plot "data/cost_gpu_all.dat" index 0 using 2:3 with points pt 5 ps 1.6 lc rgb "#0072B2" title "policy=uct", \
  "" index 1 using 2:3 with points pt 7 ps 1.6 lc rgb "#D55E00" title "policy=puct", \
  "" index 2 using 2:3 with points pt 9 ps 1.6 lc rgb "#009E73" title "policy=thompson", \
  "" index 3 using 2:3 with points pt 11 ps 1.6 lc rgb "#CC79A7" title "policy=egreedy", \
  "" index 4 using 2:3 with points pt 13 ps 1.6 lc rgb "#E69F00" title "policy=egreedy_tree", \
  "" index 5 using 2:3 with points pt 5 ps 1.6 lc rgb "#56B4E9" title "policy=beam", \
  "" index 6 using 2:3 with points pt 7 ps 1.6 lc rgb "#000000" title "policy=linear", \
  "" index 7 using 2:3 with points pt 9 ps 1.6 lc rgb "#F0E442" title "policy=random"
set terminal svg size 1100,680 dynamic font "DejaVu Sans,13" noenhanced
set output "cost_gpu_all.svg"
replot
unset output

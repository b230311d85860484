# Written by kmcts report; edit and run `gnuplot final_conv3x3.gp` in this folder to redraw.
set terminal pngcairo size 1100,680 font "DejaVu Sans,13" noenhanced
set output "final_conv3x3.png"
set title "Final speedup per seed: conv3x3"
set xlabel ""
set ylabel "final best speedup over the reference (x)"
set grid lc rgb "#dddddd"
set border 3
set tics nomirror
set key outside right top
set key off
set xrange [-0.6:7.6]
set boxwidth 0.5
set style boxplot nooutliers
set style fill solid 0.25 border
set bmargin 6
set xtics ("policy=uct" 0, "policy=puct" 1, "policy=thompson" 2, "policy=egreedy" 3, "policy=egreedy_tree" 4, "policy=beam" 5, "policy=linear" 6, "policy=random" 7) rotate by -25 left
plot "data/final_conv3x3.dat" index 0 using (0):2 with boxplot lc rgb "#0072B2", \
  "" index 0 using 3:2 with points pt 7 ps 1.3 lc rgb "#0072B2", \
  "" index 1 using (1):2 with boxplot lc rgb "#D55E00", \
  "" index 1 using 3:2 with points pt 7 ps 1.3 lc rgb "#D55E00", \
  "" index 2 using (2):2 with boxplot lc rgb "#009E73", \
  "" index 2 using 3:2 with points pt 7 ps 1.3 lc rgb "#009E73", \
  "" index 3 using (3):2 with boxplot lc rgb "#CC79A7", \
  "" index 3 using 3:2 with points pt 7 ps 1.3 lc rgb "#CC79A7", \
  "" index 4 using (4):2 with boxplot lc rgb "#E69F00", \
  "" index 4 using 3:2 with points pt 7 ps 1.3 lc rgb "#E69F00", \
  "" index 5 using (5):2 with boxplot lc rgb "#56B4E9", \
  "" index 5 using 3:2 with points pt 7 ps 1.3 lc rgb "#56B4E9", \
  "" index 6 using (6):2 with boxplot lc rgb "#000000", \
  "" index 6 using 3:2 with points pt 7 ps 1.3 lc rgb "#000000", \
  "" index 7 using (7):2 with boxplot lc rgb "#F0E442", \
  "" index 7 using 3:2 with points pt 7 ps 1.3 lc rgb "#F0E442"
set terminal svg size 1100,680 dynamic font "DejaVu Sans,13" noenhanced
set output "final_conv3x3.svg"
replot
unset output

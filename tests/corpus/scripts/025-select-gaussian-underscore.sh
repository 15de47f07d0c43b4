#PBS -N _s_4b3_c
#PBS -l select=1:ncpus=32:mem=124gb
#PBS -l walltime=72:00:00
module load gaussian/g16
g16 < in.gau > out.log

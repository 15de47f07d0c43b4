#PBS -l nodes=1:ppn=1:gpus=1
#PBS -l walltime=40:00:00
#PBS -d /tmp
#PBS -o output.txt
#PBS -e error.txt
export CUDA_VISIBLE_DEVICES=$(cat $PBS_GPUFILE | sed s/.*-gpu// )

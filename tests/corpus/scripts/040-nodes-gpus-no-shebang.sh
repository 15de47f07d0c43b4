#PBS -N full_data_trial
#PBS -l walltime=12:30:00
#PBS -l nodes=1:ppn=4:gpus=1
#PBS -j oe
cd $PBS_O_WORKDIR
python -u train.py

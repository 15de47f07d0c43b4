#!/bin/bash
#$ -S /bin/bash
#$ -cwd
#PBS -N mixed
#PBS -l nodes=1:ppn=2
hostname

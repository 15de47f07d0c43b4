#!/bin/bash
#PBS -N Array_Example
#PBS -o /tmp/corpus-out
#PBS -e /tmp/corpus-out
#PBS -l select=1:ncpus=1:mem=32mb
#PBS -l walltime=00:30:00
#PBS -J 0-127:1
#PBS -u @USER@
#PBS -M someone@ipmu.jp
#PBS -m ae
#PBS -V
#PBS -q tiny
python Array_Example.py
